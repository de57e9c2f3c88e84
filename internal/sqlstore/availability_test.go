package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

func revisions(t *testing.T, db *sqlstore.DB) (supply, calendar int64) {
	t.Helper()
	s, c, err := db.Revisions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// TestCalendarRevisionFollowsEveryWritePath checks that every kind of
// calendar write (booking, cancel, move, blocked period import and removal)
// moves the calendar revision once committed, never before, and that a
// delta read returns exactly the providers changed since a revision.
func TestCalendarRevisionFollowsEveryWritePath(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		withProvider(t, db, "prv_a")
		withProvider(t, db, "prv_b")
		_, rev0 := revisions(t, db)

		// Not visible before commit.
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			c := bokat.BookingContact{Name: "Test", Phone: "00000", Email: "test@example.se", ServiceAddress: "Testgatan 1"}
			if err := tx.InsertBooking(ctx, testBooking("bk_1", "prv_a", t0, 60), c, bokat.BookingConsent{}, "cal_bk_1", t0); err != nil {
				return err
			}
			if _, rev := revisions(t, db); rev != rev0 {
				t.Errorf("calendar revision %d before commit, want %d", rev, rev0)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		_, rev1 := revisions(t, db)
		if rev1 <= rev0 {
			t.Fatalf("a booking left the calendar revision at %d", rev1)
		}
		var read []bokat.ProviderSupply
		a, err := db.ReadAvailability(ctx, 0, rev0, false, t0.Add(-24*time.Hour), func(run []bokat.ProviderSupply) error {
			read = append(read, run...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if a.Full || !slices.Equal(a.Changed, []string{"prv_a"}) || a.CalendarRevision != rev1 || a.EntryCount() != 1 ||
			!a.Calendars[0].Booking[0] || a.Calendars[0].Spans[0].Start != t0.UnixMilli() {
			t.Errorf("delta after a booking: %+v", a)
		}
		if !a.SupplyRead || a.SupplyRevision == 0 || len(read) != 2 {
			t.Errorf("supply asked from revision 0: read %v, %d providers", a.SupplyRead, len(read))
		}

		// A blocked period of prv_b through the supply import.
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			p, err := tx.ProviderSupply(ctx, "prv_b")
			if err != nil {
				return err
			}
			p.Blocked = []bokat.BlockedPeriod{{ID: "blk_1", Start: t0.Add(2 * time.Hour), End: t0.Add(5 * time.Hour)}}
			_, err = tx.PutProviderSupply(ctx, p, t0)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		supplyRev, rev2 := revisions(t, db)
		a, err = db.ReadAvailability(ctx, supplyRev, rev1, false, t0.Add(-24*time.Hour), func([]bokat.ProviderSupply) error {
			t.Error("the supply handed over at the revision held")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if a.SupplyRead || !slices.Equal(a.Changed, []string{"prv_b"}) || a.EntryCount() != 1 || a.Calendars[0].Booking[0] {
			t.Errorf("delta after a blocked period: %+v", a)
		}

		// Cancel, move, remove the blocked period: each moves the revision.
		steps := []struct {
			name     string
			provider string
			write    func(tx *sqlstore.Tx) error
		}{
			{"move", "prv_a", func(tx *sqlstore.Tx) error {
				b := testBooking("bk_1", "prv_a", t0.Add(24*time.Hour), 60)
				b.RescheduledAt, b.Sequence = t0, 1
				return tx.MoveBooking(ctx, b, bokat.BookingContact{ServiceAddress: "Testgatan 2"}, t0)
			}},
			{"cancel", "prv_a", func(tx *sqlstore.Tx) error {
				b := testBooking("bk_1", "prv_a", t0, 60)
				b.CancelledAt, b.CancelReason, b.Sequence = t0, "customer_request", 2
				return tx.CancelBooking(ctx, b, "", t0)
			}},
			{"remove blocked", "prv_b", func(tx *sqlstore.Tx) error {
				p, err := tx.ProviderSupply(ctx, "prv_b")
				if err != nil {
					return err
				}
				p.Blocked = nil
				_, err = tx.PutProviderSupply(ctx, p, t0)
				return err
			}},
		}
		prev := rev2
		for _, s := range steps {
			if err := db.InTx(ctx, s.write); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			_, rev := revisions(t, db)
			if rev <= prev {
				t.Errorf("%s left the calendar revision at %d", s.name, rev)
			}
			a, err := db.ReadAvailability(ctx, -1, prev, false, t0.Add(-24*time.Hour), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Changed, []string{s.provider}) || a.EntryCount() > 1 {
				t.Errorf("%s: delta %+v, want %s only", s.name, a, s.provider)
			}
			prev = rev
		}
		// One transaction writing several rows of two providers, interleaved:
		// one revision, both providers marked.
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			for i, p := range []string{"prv_a", "prv_a", "prv_b", "prv_a"} {
				s := t0.Add(time.Duration(48+2*i) * time.Hour)
				if _, err := tx.Q().ExecContext(ctx, `INSERT INTO calendar_entries (id, provider_id, booking_id, kind, start_at,
					end_at, active, note, created_at) VALUES ($1, $2, NULL, 'blocked', $3, $4, TRUE, '', $3)`,
					fmt.Sprintf("blk_multi_%d", i), p, sqlstore.Millis(s), sqlstore.Millis(s.Add(time.Hour))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		_, multi := revisions(t, db)
		a, err = db.ReadAvailability(ctx, -1, prev, false, t0.Add(-24*time.Hour), nil)
		if err != nil {
			t.Fatal(err)
		}
		if multi <= prev || !slices.Equal(a.Changed, []string{"prv_a", "prv_b"}) || a.EntryCount() != 4 || len(a.Calendars) != 2 {
			t.Errorf("one transaction over two providers: revision %d → %d, delta %+v", prev, multi, a)
		}
		if db.Engine() == sqlstore.Postgres && multi != prev+1 {
			t.Errorf("one transaction moved the revision from %d to %d, want one step", prev, multi)
		}
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.Q().ExecContext(ctx, `DELETE FROM calendar_entries WHERE id LIKE 'blk_multi_%'`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		_, prev = revisions(t, db)

		// Nothing active is left, and a full read says so.
		a, err = db.ReadAvailability(ctx, -1, -1, true, t0.Add(-24*time.Hour), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Full || len(a.Calendars) != 0 || a.CalendarRevision != prev {
			t.Errorf("full read at the end: %+v", a)
		}
	})
}

// The supply is handed over in runs of providers ordered by id, each with
// its own rows only: together, every provider as one read gives them.
func TestSupplyIsReadInRunsOfProviders(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		for i, id := range []string{"prv_e", "prv_a", "prv_d", "prv_b", "prv_c"} {
			withProvider(t, db, id)
			err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
				p, err := tx.ProviderSupply(ctx, id)
				if err != nil {
					return err
				}
				p.Postcodes = []bokat.PostcodeRange{{From: 11100 + i, To: 11800 + i}}
				p.Services = []bokat.ProviderService{{ServiceID: "vvs_install_faucet_standard", PriceSEK: int64(1000 + i)},
					{ServiceID: "vvs_drain_jetting_single_starting", PriceSEK: int64(2000 + i)}}
				p.Hours = []bokat.WorkingRange{{Weekday: time.Monday, StartMinute: 480, EndMinute: 960 + i}}
				_, err = tx.PutProviderSupply(ctx, p, t0)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		whole, err := db.LoadSupply(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var runs [][]bokat.ProviderSupply
		if err := db.ProviderRuns(ctx, 2, func(run []bokat.ProviderSupply) error {
			runs = append(runs, run)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var sizes []int
		var all []bokat.ProviderSupply
		for _, r := range runs {
			sizes, all = append(sizes, len(r)), append(all, r...)
		}
		if !slices.Equal(sizes, []int{2, 2, 1}) {
			t.Errorf("runs of %v providers, want [2 2 1]", sizes)
		}
		if len(all) != len(whole.Providers) {
			t.Fatalf("%d providers in runs, %d in one read", len(all), len(whole.Providers))
		}
		for i, p := range all {
			w := whole.Providers[i]
			if p.ID != w.ID || !slices.Equal(p.Postcodes, w.Postcodes) || !slices.Equal(p.Services, w.Services) ||
				!slices.Equal(p.Hours, w.Hours) || len(p.Services) == 0 {
				t.Errorf("provider %d in runs %+v, in one read %+v", i, p, w)
			}
		}
		// A build reads the supply on a second snapshot beside the calendar:
		// the same providers; a snapshot at other revisions reads nothing.
		var built []bokat.ProviderSupply
		a, err := db.ReadAvailability(ctx, -1, -1, true, t0.Add(-24*time.Hour), func(run []bokat.ProviderSupply) error {
			built = append(built, run...)
			return nil
		})
		if err != nil || !a.SupplyRead || a.SupplyRevision != whole.Revision || len(built) != len(whole.Providers) {
			t.Errorf("a build read %d providers at revision %d (%v), want %d at %d", len(built), a.SupplyRevision, err,
				len(whole.Providers), whole.Revision)
		}
		for i := range built {
			if built[i].ID != whole.Providers[i].ID || !slices.Equal(built[i].Services, whole.Providers[i].Services) {
				t.Errorf("a build's provider %d: %+v, want %+v", i, built[i], whole.Providers[i])
			}
		}
		err = db.SupplyBeside(ctx, a.SupplyRevision, a.CalendarRevision-1, func([]bokat.ProviderSupply) error {
			t.Error("a supply handed from a snapshot at other revisions")
			return nil
		})
		if !errors.Is(err, sqlstore.ErrSnapshotMoved) {
			t.Errorf("a snapshot at other revisions: %v", err)
		}
		stop := errors.New("stop")
		if err := db.ProviderRuns(ctx, 2, func([]bokat.ProviderSupply) error { return stop }); !errors.Is(err, stop) {
			t.Errorf("an error of the caller: got %v", err)
		}
	})
}
