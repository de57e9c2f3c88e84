package sqlstore

import (
	"context"

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
