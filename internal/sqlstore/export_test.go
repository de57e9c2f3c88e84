package sqlstore

import (
	"context"
	"database/sql"

	"bokat"
)

// MigrateDownTo rolls the schema back to version v, for tests of what a
// migration does to rows written before it.
func (db *DB) MigrateDownTo(ctx context.Context, v int64) error {
	p, err := db.provider()
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, v)
	return err
}

// Exec runs a statement on the write pool, for tests that shape rows no
// store method writes.
func (db *DB) Exec(ctx context.Context, query string, args ...any) error {
	_, err := db.write.ExecContext(ctx, query, args...)
	return err
}

// ProviderRuns reads every provider in runs of at most n, as
// ReadAvailability hands the supply to search.
func (db *DB) ProviderRuns(ctx context.Context, n int, fn func([]bokat.ProviderSupply) error) error {
	return loadProviderRuns(ctx, db.read, n, fn)
}

// SupplyBeside reads the supply in a snapshot of its own that must be at
// the revisions given, as a full ReadAvailability does beside its calendar
// read; ErrSnapshotMoved when it is not.
func (db *DB) SupplyBeside(ctx context.Context, supplyRev, calendarRev int64, fn func([]bokat.ProviderSupply) error) error {
	return db.readSupplyBeside(ctx, &sql.TxOptions{ReadOnly: true}, supplyRev, calendarRev, fn)
}

var ErrSnapshotMoved = errSnapshotMoved

// Strings runs a query of one text column on the write pool and returns its
// rows, for tests that look at rows no store method reads.
func (db *DB) Strings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := db.write.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
