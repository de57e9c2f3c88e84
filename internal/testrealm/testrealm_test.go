package testrealm_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/clocktest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
	"bokat/internal/testrealm"
)

// TestSeedIsTheTestRealmAndIdempotent: every magic provider is stored in
// the test realm, offering every catalog service; seeding again changes
// nothing.
func TestSeedIsTheTestRealmAndIdempotent(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		cat, err := catalog.Load()
		if err != nil {
			t.Fatal(err)
		}
		st := sqlstore.Bind[supply.Tx](db)
		if _, err := testrealm.Seed(ctx, st, cat, sqlstoretest.T0); err != nil {
			t.Fatal(err)
		}
		res, err := testrealm.Seed(ctx, st, cat, sqlstoretest.T0.Add(time.Hour))
		if err != nil || res.Changed() {
			t.Fatalf("second seed: %v, %v; want nothing changed", res, err)
		}
		for _, id := range []string{bokat.TestProviderFree, bokat.TestProviderTaken, bokat.TestProviderUnreachable,
			bokat.TestProviderFollowUpOnly, bokat.TestProviderCancels} {
			var mode string
			var services int
			if err := db.R().QueryRowContext(ctx, `SELECT p.mode, (SELECT COUNT(*) FROM provider_services s WHERE s.provider_id = p.id)
				FROM providers p WHERE p.id = $1`, id).Scan(&mode, &services); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if mode != "test" || services != len(cat.ServiceIDs()) {
				t.Errorf("%s: mode %s, %d services; want test, %d", id, mode, services, len(cat.ServiceIDs()))
			}
		}
	})
}

// TestCancellerCancelsTheCancellingProvidersBookingsAnHourLater: the
// bookings of test_cancels are cancelled (with their event) once an hour
// has passed since their confirmation, and no other booking is.
func TestCancellerCancelsTheCancellingProvidersBookingsAnHourLater(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		cat, err := catalog.Load()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := testrealm.Seed(ctx, sqlstore.Bind[supply.Tx](db), cat, sqlstoretest.T0); err != nil {
			t.Fatal(err)
		}
		start := sqlstoretest.T0.Add(48 * time.Hour)
		for _, b := range []bokat.Booking{
			sqlstoretest.Booking("bkg_cancels", bokat.TestProviderCancels, start, 60),
			sqlstoretest.Booking("bkg_free", bokat.TestProviderFree, start, 60),
		} {
			b.Mode = bokat.ModeTest
			if err := sqlstoretest.InsertBooking(t, db, b); err != nil {
				t.Fatal(err)
			}
		}
		clk := clocktest.New(sqlstoretest.T0.Add(testrealm.CancelAfter - time.Minute))
		c := testrealm.NewCanceller(sqlstore.Bind[booking.Tx](db), db, clk.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if n, err := c.RunOnce(ctx); err != nil || n != 0 {
			t.Fatalf("before the hour: cancelled %d (%v), want 0", n, err)
		}
		clk.Advance(2 * time.Minute)
		if n, err := c.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("after the hour: cancelled %d (%v), want 1", n, err)
		}
		for id, want := range map[string]string{"bkg_cancels": "cancelled", "bkg_free": "confirmed"} {
			var status string
			if err := db.R().QueryRowContext(ctx, `SELECT status FROM bookings WHERE id = $1`, id).Scan(&status); err != nil || status != want {
				t.Errorf("%s: status %q (%v), want %s", id, status, err, want)
			}
		}
		var events int
		if err := db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox_events
			WHERE booking_id = 'bkg_cancels' AND event_type = 'booking.cancelled' AND mode = 'test'`).Scan(&events); err != nil || events != 1 {
			t.Errorf("booking.cancelled events = %d (%v), want 1", events, err)
		}
		if n, err := c.RunOnce(ctx); err != nil || n != 0 {
			t.Errorf("again: cancelled %d (%v), want 0", n, err)
		}
	})
}

// TestRetentionErasesOnTheOwnersClock: a test booking's contact data goes
// once its retention has passed on its owner's test clock, while another
// test owner's and a live booking of the same age keep theirs, and the
// server's clock never moves.
func TestRetentionErasesOnTheOwnersClock(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		start := sqlstoretest.T0.Add(48 * time.Hour)
		for _, c := range []struct {
			id, owner string
			mode      bokat.Mode
		}{{"bkg_a", "pc_a", bokat.ModeTest}, {"bkg_b", "pc_b", bokat.ModeTest}, {"bkg_live", "pc_live", bokat.ModeLive}} {
			b := sqlstoretest.Booking(c.id, "prov_"+c.id, start, 60)
			b.OwnerClientID, b.Mode = c.owner, c.mode
			sqlstoretest.WithProvider(t, db, "prov_"+c.id)
			if err := sqlstoretest.InsertBooking(t, db, b); err != nil {
				t.Fatal(err)
			}
		}
		clk := clocktest.New(sqlstoretest.T0)
		const retain = 30 * 24 * time.Hour
		r := testrealm.NewRetention(db, db.EraseTestBookingContact, retain, clk.Now, slog.New(slog.DiscardHandler))
		erased := func(id string) bool {
			var at sql.NullInt64
			if err := db.R().QueryRowContext(ctx, `SELECT contact_erased_at FROM bookings WHERE id = $1`, id).Scan(&at); err != nil {
				t.Fatal(err)
			}
			return at.Valid
		}
		advance := func(owner string, by time.Duration) {
			if _, err := db.AdvanceTestClock(ctx, owner, "", clk.Now(), func(time.Duration) (time.Duration, error) { return by, nil }); err != nil {
				t.Fatal(err)
			}
		}
		// Just short of the retention on a's clock: nothing goes.
		advance("pc_a", 49*time.Hour+retain-time.Minute)
		advance("pc_b", time.Hour)
		if n, err := r.RunOnce(ctx); err != nil || n != 0 {
			t.Fatalf("before the retention passed: erased %d (%v)", n, err)
		}
		advance("pc_a", 2*time.Minute)
		if n, err := r.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("after the retention passed on a's clock: erased %d (%v), want 1", n, err)
		}
		for id, want := range map[string]bool{"bkg_a": true, "bkg_b": false, "bkg_live": false} {
			if got := erased(id); got != want {
				t.Errorf("%s erased = %v, want %v", id, got, want)
			}
		}
		if n, err := r.RunOnce(ctx); err != nil || n != 0 {
			t.Errorf("again: erased %d (%v), want 0", n, err)
		}
		if _, err := db.EraseTestBookingContact(ctx, "bkg_live", clk.Now().Add(100*retain), clk.Now().Add(99*retain)); err == nil {
			t.Error("the test realm's eraser erased a live booking")
		}
	})
}

// TestSeedersStartingAtOnceAllSucceed: several serve processes starting at
// once on one new database (each with its own connection pool) all seed
// the test realm without an error; exactly one of them creates the magic
// providers, and the database holds each once, complete. The same holds
// when they start at once on a realm an older release seeded differently.
func TestSeedersStartingAtOnceAllSucceed(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		cat, err := catalog.Load()
		if err != nil {
			t.Fatal(err)
		}
		const processes = 6
		stores := []*sqlstore.DB{db}
		for len(stores) < processes {
			stores = append(stores, sqlstoretest.Reopen(t, db, nil))
		}
		// seedAtOnce starts every seeder at the same moment and returns
		// how many created and how many updated the realm.
		seedAtOnce := func(now time.Time) (created, updated int) {
			t.Helper()
			var (
				start   = make(chan struct{})
				wg      sync.WaitGroup
				results = make([]supply.Result, processes)
				errs    = make([]error, processes)
			)
			for i, st := range stores {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					results[i], errs[i] = testrealm.Seed(ctx, sqlstore.Bind[supply.Tx](st), cat, now)
				}()
			}
			close(start)
			wg.Wait()
			for i := range stores {
				if errs[i] != nil {
					t.Errorf("seeder %d: %v", i, errs[i])
				}
				if len(results[i].Created) > 0 {
					created++
				}
				if len(results[i].Updated) > 0 {
					updated++
				}
			}
			return created, updated
		}
		// check fails unless the realm is stored once, complete, as Supply says.
		check := func(when string) {
			t.Helper()
			var providers, services, stale int
			if err := db.R().QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM providers WHERE mode = 'test'),
				(SELECT COUNT(*) FROM provider_services s JOIN providers p ON p.id = s.provider_id WHERE p.mode = 'test'),
				(SELECT COUNT(*) FROM provider_services s JOIN providers p ON p.id = s.provider_id
				 WHERE p.mode = 'test' AND s.price_sek NOT IN (0, $1))`, testrealm.PriceSEK).
				Scan(&providers, &services, &stale); err != nil {
				t.Fatal(err)
			}
			if want := len(testrealm.Supply(cat)); providers != want || services != want*len(cat.ServiceIDs()) || stale != 0 {
				t.Errorf("%s: stored %d test providers with %d services (%d of another price), want %d with %d",
					when, providers, services, stale, want, want*len(cat.ServiceIDs()))
			}
		}

		if created, updated := seedAtOnce(sqlstoretest.T0); created != 1 || updated != 0 {
			t.Errorf("first start: %d seeders created and %d updated the realm, want exactly 1 creating", created, updated)
		}
		check("first start")

		// An older release's realm: other prices. Every seeder succeeds and
		// the prices are Supply's again.
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.Q().ExecContext(ctx, `UPDATE provider_services SET price_sek = 1 WHERE price_sek > 0
				AND provider_id IN (SELECT id FROM providers WHERE mode = 'test')`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if created, updated := seedAtOnce(sqlstoretest.T0.Add(time.Hour)); created != 0 || updated == 0 {
			t.Errorf("restart on a stale realm: %d seeders created and %d updated, want none creating and some updating", created, updated)
		}
		check("restart on a stale realm")
	})
}
