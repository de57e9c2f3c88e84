package testrealm_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/clocktest"
	"bokat/internal/followup"
	"bokat/internal/privacy"
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

// TestRetentionErasesOnTheOwnersClock: a test booking's and a test
// follow-up request's contact data go once their retention has passed on
// their owner's test clock, while another test owner's and a live booking
// and request of the same age keep theirs, and the server's clock never
// moves.
func TestRetentionErasesOnTheOwnersClock(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		start := sqlstoretest.T0.Add(48 * time.Hour)
		owners := []struct {
			suffix, owner string
			mode          bokat.Mode
		}{{"a", "pc_a", bokat.ModeTest}, {"b", "pc_b", bokat.ModeTest}, {"live", "pc_live", bokat.ModeLive}}
		for _, c := range owners {
			b := sqlstoretest.Booking("bkg_"+c.suffix, "prov_"+c.suffix, start, 60)
			b.OwnerClientID, b.Mode = c.owner, c.mode
			sqlstoretest.WithProvider(t, db, "prov_"+c.suffix)
			if err := sqlstoretest.InsertBooking(t, db, b); err != nil {
				t.Fatal(err)
			}
			insertRequest(t, db, "req_"+c.suffix, c.owner, c.mode, sqlstoretest.T0)
		}
		clk := clocktest.New(sqlstoretest.T0)
		retain := privacy.Retention{Bookings: 30 * 24 * time.Hour, Requests: 7 * 24 * time.Hour}
		r := testrealm.NewRetention(db, retain, clk.Now, slog.New(slog.DiscardHandler))
		erased := func(table, id string) bool {
			var at sql.NullInt64
			if err := db.R().QueryRowContext(ctx, `SELECT contact_erased_at FROM `+table+` WHERE id = $1`, id).Scan(&at); err != nil {
				t.Fatal(err)
			}
			return at.Valid
		}
		advance := func(owner string, by time.Duration) {
			if _, err := db.AdvanceTestClock(ctx, owner, "", clk.Now(), func(time.Duration) (time.Duration, error) { return by, nil }); err != nil {
				t.Fatal(err)
			}
		}
		want := func(step string, erasedIDs ...string) {
			t.Helper()
			for _, c := range owners {
				for table, id := range map[string]string{"bookings": "bkg_" + c.suffix, "follow_up_requests": "req_" + c.suffix} {
					if got, want := erased(table, id), slices.Contains(erasedIDs, id); got != want {
						t.Errorf("%s: %s erased = %v, want %v", step, id, got, want)
					}
				}
			}
		}
		// Just short of the request's retention on a's clock: nothing goes.
		advance("pc_a", retain.Requests-time.Minute)
		advance("pc_b", time.Hour)
		if n, err := r.RunOnce(ctx); err != nil || n != 0 {
			t.Fatalf("before a retention passed: erased %d (%v)", n, err)
		}
		advance("pc_a", 2*time.Minute)
		if n, err := r.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("after the request's retention passed on a's clock: erased %d (%v), want 1", n, err)
		}
		want("request retention", "req_a")
		var erasedAt int64
		if err := db.R().QueryRowContext(ctx, `SELECT contact_erased_at FROM follow_up_requests WHERE id = 'req_a'`).Scan(&erasedAt); err != nil {
			t.Fatal(err)
		}
		if got, aNow := time.UnixMilli(erasedAt).UTC(), clk.Now().Add(retain.Requests+time.Minute); !got.Equal(aNow) {
			t.Errorf("req_a erased at %v, want a's now %v", got, aNow)
		}
		// Just short of the booking's retention on a's clock (its slot
		// ended 49 hours after T0), then past it.
		advance("pc_a", 49*time.Hour+retain.Bookings-retain.Requests-2*time.Minute)
		if n, err := r.RunOnce(ctx); err != nil || n != 0 {
			t.Fatalf("before the booking's retention passed: erased %d (%v)", n, err)
		}
		advance("pc_a", 2*time.Minute)
		if n, err := r.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("after the booking's retention passed on a's clock: erased %d (%v), want 1", n, err)
		}
		want("booking retention", "req_a", "bkg_a")
		if n, err := r.RunOnce(ctx); err != nil || n != 0 {
			t.Errorf("again: erased %d (%v), want 0", n, err)
		}
		if _, err := db.EraseTestBookingContact(ctx, "bkg_live", clk.Now().Add(100*retain.Bookings), clk.Now().Add(99*retain.Bookings)); err == nil {
			t.Error("the test realm's eraser erased a live booking")
		}
		if _, err := db.EraseTestRequestContact(ctx, "req_live", clk.Now().Add(100*retain.Requests), clk.Now().Add(99*retain.Requests)); err == nil {
			t.Error("the test realm's eraser erased a live request")
		}
		want("live refused", "req_a", "bkg_a")
	})
}

// insertRequest stores a follow-up request of the owner in the realm mode,
// created at created, with contact data.
func insertRequest(t *testing.T, db *sqlstore.DB, id, owner string, mode bokat.Mode, created time.Time) {
	t.Helper()
	r := followup.Record{ID: id, SessionID: "s_" + id, OwnerClientID: owner, Mode: mode, VerticalID: "vvs",
		JobTypeID: "install_faucet", Status: followup.StatusReadyToSend, Description: "Kranen droppar",
		CustomerJSON: []byte(`{"name":"Testa Testsson","phone":"+46700000000","email":"testa@example.se"}`),
		LocationJSON: []byte(`{"postcode":"113 45"}`), Postcode: "113 45", TimingJSON: []byte(`{}`),
		CustomerNextStep: followup.DefaultNextStep, Source: followup.DefaultSource, Locale: "sv-SE",
		Timezone: "Europe/Stockholm", ConsentStatement: "ja", ConsentSource: "chat", ConsentCollectedAt: created, CreatedAt: created}
	ctx := context.Background()
	if err := db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.InsertFollowUpRequest(ctx, r) }); err != nil {
		t.Fatal(err)
	}
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
