package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"bokat"
	"bokat/internal/calsync"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// Migration 00016 keeps the calendar and its rules: bookings and blocked
// periods written before it survive it (down and up again), booking
// entries still never overlap, a synced busy time may overlap a booking,
// and every kind of write still moves the calendar revision.
func TestCalendarFeedsMigrationKeepsTheCalendar(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		// The rows are written by today's code (its writes name columns of
		// later migrations), then the store goes down to 15 and up again.
		withProvider(t, db, "prv_1")
		if err := insert(t, db, testBooking("bkg_a", "prv_1", t0, 60)); err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(ctx, `INSERT INTO calendar_entries (id, provider_id, kind, start_at, end_at, active, note, created_at)
			VALUES ('blk_1', 'prv_1', 'blocked', $1, $2, TRUE, 'Semester', 0)`,
			sqlstore.Millis(t0.Add(48*time.Hour)), sqlstore.Millis(t0.Add(72*time.Hour))); err != nil {
			t.Fatal(err)
		}
		if err := db.MigrateDownTo(ctx, 15); err != nil {
			t.Fatalf("down to 15: %v", err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("up to 16: %v", err)
		}
		entries, err := db.BusyEntries(ctx, []string{"prv_1"}, t0.Add(-time.Hour), t0.Add(96*time.Hour))
		if err != nil || len(entries) != 2 || entries[0].BookingID != "bkg_a" || entries[1].ID != "blk_1" {
			t.Fatalf("entries after 00016 = %+v, %v", entries, err)
		}
		// Booking entries still never overlap.
		if err := insert(t, db, testBooking("bkg_b", "prv_1", t0.Add(30*time.Minute), 60)); !errors.Is(err, bokat.ErrConflict) {
			t.Fatalf("overlapping booking after 00016: %v, want a conflict", err)
		}
		// A feed's busy time over the booking is stored, and moves the revision.
		bound := sqlstore.Bind[calsync.Tx](db)
		feed := calsync.Feed{ID: "cfd_1", ProviderID: "prv_1", URL: "https://kalender.example.se/a.ics", Label: "kalender.example.se",
			Rule: calsync.RuleBusyOnly, Source: calsync.SourceOperator}
		_, rev0, err := db.Revisions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var rows int
		err = bound.InTx(ctx, func(tx calsync.Tx) error {
			if err := tx.InsertFeed(ctx, feed, t0); err != nil {
				return err
			}
			rows, err = tx.ReplaceSyncedBusy(ctx, "prv_1", "cfd_1", []calsync.Interval{{Start: t0.Add(-30 * time.Minute), End: t0.Add(30 * time.Minute)}}, t0)
			return err
		})
		if err != nil || rows != 1 {
			t.Fatalf("synced busy time over a booking: %d rows, %v", rows, err)
		}
		_, rev1, err := db.Revisions(ctx)
		if err != nil || rev1 <= rev0 {
			t.Fatalf("revision %d after the sync, want past %d (%v)", rev1, rev0, err)
		}
		// The same busy times again write nothing and leave the revision.
		err = bound.InTx(ctx, func(tx calsync.Tx) error {
			rows, err = tx.ReplaceSyncedBusy(ctx, "prv_1", "cfd_1", []calsync.Interval{{Start: t0.Add(-30 * time.Minute), End: t0.Add(30 * time.Minute)}}, t0)
			return err
		})
		if _, rev2, _ := db.Revisions(ctx); err != nil || rows != 0 || rev2 != rev1 {
			t.Fatalf("unchanged busy times: %d rows, revision %d (was %d), %v", rows, rev2, rev1, err)
		}
		// A second booking of the same provider still cannot overlap the first,
		// whatever synced entries lie around them.
		if err := insert(t, db, testBooking("bkg_c", "prv_1", t0.Add(90*time.Minute), 60)); err != nil {
			t.Fatalf("free booking after the sync: %v", err)
		}
	})
}
