package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// BenchmarkReadAvailabilityFull reads every entry of 1,000 providers with
// 100 busy times each, as search's full build (and its refresh after
// more than 2,000 providers' calendars changed, as a calendar sync round
// does) reads them. B/op is what the read allocates.
func BenchmarkReadAvailabilityFull(b *testing.B) {
	db := sqlstoretest.Open(b, sqlstore.SQLite)
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
		if _, err := tx.Q().ExecContext(ctx, `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000)
			INSERT INTO providers (id, name, email, active, min_notice_minutes, horizon_days, created_at, updated_at)
			SELECT 'prv_' || x, 'P', 'p@example.se', TRUE, 60, 30, 0, 0 FROM n`); err != nil {
			return err
		}
		_, err := tx.Q().ExecContext(ctx, `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 100000)
			INSERT INTO calendar_entries (id, provider_id, kind, start_at, end_at, active, created_at)
			SELECT 'cal_' || x, 'prv_' || (x % 1000 + 1), 'blocked', $1 + x * 3600000, $1 + x * 3600000 + 1800000, TRUE, 0 FROM n`,
			time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		a, err := db.ReadAvailability(ctx, -1, -1, true, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), nil)
		if err != nil || a.EntryCount() != 100000 {
			b.Fatalf("read %d entries, %v", a.EntryCount(), err)
		}
	}
}
