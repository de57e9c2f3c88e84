package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// Test activity never counts in live metrics: a waiting test event or job
// does not move the lag gauges' queries; a live one does.
func TestBacklogCountsLiveWorkOnly(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		insert := func(id string, mode bokat.Mode, at time.Time) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
				if _, err := tx.Q().ExecContext(ctx, `INSERT INTO outbox_events (id, owner_client_id, booking_id, event_type,
					payload, occurred_at, created_at, mode) VALUES ($1, 'c', 'b', 'booking.confirmed', '{}', $2, $2, $3)`,
					"evt_"+id, sqlstore.Millis(at), string(mode)); err != nil {
					return err
				}
				_, err := tx.Q().ExecContext(ctx, `INSERT INTO notification_jobs (id, booking_id, event_type, recipient, status,
					next_attempt_at, created_at, updated_at, mode) VALUES ($1, 'b', 'booking.confirmed', 'provider', 'pending', $2, $2, $2, $3)`,
					"job_"+id, sqlstore.Millis(at), string(mode))
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		check := func(when string, wantOK bool, want time.Time) {
			t.Helper()
			got, ok, err := db.OldestUnrelayedOutboxEvent(ctx)
			if err != nil || ok != wantOK || (ok && !got.Equal(want)) {
				t.Errorf("%s: oldest outbox event = %s, %v, %v; want %s, %v", when, got, ok, err, want, wantOK)
			}
			got, ok, err = db.OldestDueNotification(ctx, now)
			if err != nil || ok != wantOK || (ok && !got.Equal(want)) {
				t.Errorf("%s: oldest due job = %s, %v, %v; want %s, %v", when, got, ok, err, want, wantOK)
			}
		}
		insert("test", bokat.ModeTest, now.Add(-time.Hour))
		check("a test event and job waiting", false, time.Time{})
		insert("live", bokat.ModeLive, now.Add(-time.Minute))
		check("a live one waiting too", true, now.Add(-time.Minute))
	})
}
