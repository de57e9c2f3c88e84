package booking_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/idem"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

var testPrincipal = bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: "pc_1"}

func confirmInput(o booking.Option) booking.ConfirmInput {
	return booking.ConfirmInput{
		OptionID:         o.ID,
		Customer:         bokat.BookingContact{FirstName: "Greta", LastName: "Gåsfot", Phone: "+46701234567", Email: "greta@example.se"},
		ServiceLocation:  booking.Location{Address: "Drottninggatan 1", Postcode: "113 45"},
		ConsentConfirmed: true, TermsAccepted: true, TermsVersion: o.Claims.TermsVersion, TermsAcceptedAt: o.Claims.IssuedAt,
	}
}

func stored(b bokat.Booking) (idem.Outcome, error) {
	raw, err := json.Marshal(booking.RecordOf(b))
	return idem.Outcome{Body: raw}, err
}

func TestLifecycleConfirmsInTheSearchLocale(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		now := local(2026, 11, 23, 6, 0)
		f := newFixture(t, db, oneProvider, now)
		l, err := f.lifecycle(nil)
		if err != nil {
			t.Fatal(err)
		}
		q := query("vvs", "install_faucet", "113 45", "i morgon")
		q.Locale = "en-GB"
		o := f.run(t, q).Options[0]
		key := idem.Key{Owner: testPrincipal.OwnerKey(), Operation: booking.OpConfirm, Key: "k1"}
		out, replay, err := l.Confirm(context.Background(), testPrincipal, confirmInput(o), key, "fp", stored)
		if err != nil || replay {
			t.Fatalf("confirm: %v (replay %v)", err, replay)
		}
		var rec booking.Record
		if err := json.Unmarshal(out.Body, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.SlotLabel != o.SlotLabel || !strings.Contains(rec.SlotLabel, ", ") || rec.SlotStartAt != booking.WireTime(o.Slot.Start) {
			t.Errorf("slot label %q, option's %q", rec.SlotLabel, o.SlotLabel)
		}
		nb, err := db.NotificationBooking(context.Background(), out.ResourceID)
		if err != nil || nb.Locale != "en-GB" || nb.Contact.FullName() != "Greta Gåsfot" || nb.ServiceLabelEN == "" {
			t.Errorf("stored %+v %v", nb, err)
		}

		// The provider could not be told: the event carries the reason, no jobs.
		if err := l.ProviderActionRequired(context.Background(), out.ResourceID, "provider_notification_failed"); err != nil {
			t.Fatal(err)
		}
		var payload string
		err = db.R().QueryRowContext(context.Background(), `SELECT payload FROM outbox_events
			WHERE booking_id = $1 AND event_type = 'booking.provider_action_required'`, out.ResourceID).Scan(&payload)
		if err != nil {
			t.Fatal(err)
		}
		var data booking.EventData
		if err := json.Unmarshal([]byte(payload), &data); err != nil || data.Reason != "provider_notification_failed" ||
			data.Booking.ID != out.ResourceID || data.RequestID != nb.RequestID || strings.Contains(payload, "greta") {
			t.Errorf("payload %s", payload)
		}
		var jobs int
		_ = db.R().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM notification_jobs WHERE booking_id = $1`, out.ResourceID).Scan(&jobs)
		if jobs != 2 {
			t.Errorf("%d jobs, want only the confirmation's two", jobs)
		}
		if err := l.ProviderActionRequired(context.Background(), "bkg_nope", "x"); !errors.Is(err, bokat.ErrNotFound) {
			t.Errorf("unknown booking: %v", err)
		}
	})
}

// TestLifecycleConfirmsABo1OptionIssuedBefore: an option id of the earlier
// format, issued before the release, confirms while it lives, and its
// claims are still revalidated against the current supply.
func TestLifecycleConfirmsABo1OptionIssuedBefore(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		now := local(2026, 11, 23, 6, 0)
		f := newFixture(t, db, oneProvider, now)
		l, err := f.lifecycle(nil)
		if err != nil {
			t.Fatal(err)
		}
		o := f.run(t, query("vvs", "install_faucet", "113 45", "i morgon")).Options[0]
		if !strings.HasPrefix(o.ID, "bo2.") {
			t.Fatalf("search issued %q, want a bo2 id", o.ID)
		}
		cheaper := o.Claims
		cheaper.AmountSEK--
		in := confirmInput(o)
		in.OptionID = booking.SignV1(f.keys, t, cheaper)
		key := idem.Key{Owner: testPrincipal.OwnerKey(), Operation: booking.OpConfirm, Key: "k-cheaper"}
		if _, _, err := l.Confirm(context.Background(), testPrincipal, in, key, "fp", stored); bokat.ErrorCode(err) != bokat.CodeBookingOptionChanged {
			t.Errorf("a bo1 id of a price the provider no longer asks: %v, want booking_option_changed", err)
		}

		in.OptionID = booking.SignV1(f.keys, t, o.Claims)
		key.Key = "k-bo1"
		out, replay, err := l.Confirm(context.Background(), testPrincipal, in, key, "fp", stored)
		if err != nil || replay {
			t.Fatalf("confirm of a bo1 id: %v (replay %v)", err, replay)
		}
		var rec booking.Record
		if err := json.Unmarshal(out.Body, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.ProviderID != o.Claims.ProviderID || rec.SlotStartAt != booking.WireTime(o.Slot.Start) {
			t.Errorf("booked %+v, want the option's provider and slot", rec)
		}
		// A bo2 id names no vertical or job type: the booking has its
		// service's, as the bo1 one has those it carries.
		second := confirmInput(f.run(t, query("vvs", "install_faucet", "113 45", "i morgon")).Options[0])
		key.Key = "k-bo2"
		out2, _, err := l.Confirm(context.Background(), testPrincipal, second, key, "fp", stored)
		if err != nil {
			t.Fatalf("confirm of a bo2 id: %v", err)
		}
		for _, id := range []string{out.ResourceID, out2.ResourceID} {
			var vertical, jobType string
			err := db.R().QueryRowContext(context.Background(), `SELECT vertical_id, job_type_id FROM bookings WHERE id = $1`, id).Scan(&vertical, &jobType)
			if err != nil || vertical != "vvs" || jobType != "install_faucet" {
				t.Errorf("booking %s is of %q/%q (%v), want vvs/install_faucet", id, vertical, jobType, err)
			}
		}
	})
}

func TestLifecycleChecksBeforeWriting(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 23, 6, 0)
	f := sqliteFixture(t, oneProvider, now)
	l, _ := f.lifecycle(nil)
	o := f.run(t, query("vvs", "install_faucet", "11345", "i morgon")).Options[0]
	tests := []struct {
		name   string
		mutate func(*booking.ConfirmInput)
		want   bokat.Code
	}{
		{"no consent", func(in *booking.ConfirmInput) { in.ConsentConfirmed = false }, bokat.CodeConsentRequired},
		{"terms not accepted", func(in *booking.ConfirmInput) { in.TermsAccepted = false }, bokat.CodeTermsNotAccepted},
		{"terms version", func(in *booking.ConfirmInput) { in.TermsVersion = "fixed_price_terms_v1:x" }, bokat.CodeTermsVersionMismatch},
		{"postcode", func(in *booking.ConfirmInput) { in.ServiceLocation.Postcode = "11346" }, bokat.CodePostcodeMismatch},
		{"unreadable postcode", func(in *booking.ConfirmInput) { in.ServiceLocation.Postcode = "abc" }, bokat.CodePostcodeMismatch},
		{"option", func(in *booking.ConfirmInput) { in.OptionID = "bo1.test.e30.AAAA" }, bokat.CodeBookingOptionInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := confirmInput(o)
			tc.mutate(&in)
			_, _, err := l.Confirm(context.Background(), testPrincipal, in,
				idem.Key{Owner: "pc_1", Operation: booking.OpConfirm, Key: "k-" + tc.name}, "fp", stored)
			if got := bokat.ErrorCode(err); got != tc.want {
				t.Errorf("code %s (%v), want %s", got, err, tc.want)
			}
		})
	}
	f.clock.Advance(time.Hour)
	_, _, err := l.Confirm(context.Background(), testPrincipal, confirmInput(o), idem.Key{Owner: "pc_1", Operation: booking.OpConfirm, Key: "late"}, "fp", stored)
	if bokat.ErrorCode(err) != bokat.CodeBookingOptionExpired {
		t.Errorf("expired option: %v", err)
	}
	var n int
	_ = f.db.R().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM bookings`).Scan(&n)
	if n != 0 {
		t.Errorf("%d bookings written by refused confirmations", n)
	}
}

// TestConfirmLosesToAConcurrentWriter: a booking committed by another
// transaction after the confirmation revalidated its option still wins. On
// PostgreSQL the confirmation is held at its calendar insert by the
// exclusion constraint until the other transaction commits, then refused;
// on SQLite it waits for the single writer and its revalidation sees the
// booking.
func TestConfirmLosesToAConcurrentWriter(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := local(2026, 11, 23, 6, 0)
		f := newFixture(t, db, oneProvider, now)
		l, _ := f.lifecycle(nil)
		o := f.run(t, query("vvs", "install_faucet", "11345", "i morgon")).Options[0]

		holding, release, committed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			committed <- db.InTx(ctx, func(tx *sqlstore.Tx) error {
				b := bokat.Booking{ID: "bkg_other", RequestID: "bkr_other", OwnerClientID: "pc_2", Status: bokat.BookingConfirmed,
					ProviderID: o.Provider.ID, ProviderName: o.Provider.Name, ServiceID: o.Service.ID, VerticalID: "vvs",
					JobTypeID: "install_faucet", ServiceLabelSV: "x", SlotStart: o.Slot.Start, SlotEnd: o.Slot.End,
					PricingModel: "flat", PriceType: "avg_fixed", Quantity: 1, TermsVersion: o.Claims.TermsVersion,
					TermsAcceptedAt: now, Postcode: "11345", Locale: "sv-SE", Source: "test", ConfirmedAt: now}
				if err := tx.InsertBooking(ctx, b, bokat.BookingContact{Phone: "00000", Email: "x@example.se", ServiceAddress: "x"},
					bokat.BookingConsent{}, "cal_other", now); err != nil {
					return err
				}
				close(holding)
				<-release
				return nil
			})
		}()
		<-holding
		result := make(chan error, 1)
		go func() {
			_, _, err := l.Confirm(ctx, testPrincipal, confirmInput(o), idem.Key{Owner: "pc_1", Operation: booking.OpConfirm, Key: "k"}, "fp", stored)
			result <- err
		}()
		if db.Engine() == sqlstore.Postgres {
			// Wait until the confirmation is blocked on the other transaction's entry.
			for {
				var waiting int
				if err := db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
					WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				if waiting > 0 {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		close(release)
		if err := <-committed; err != nil {
			t.Fatal(err)
		}
		err := <-result
		var be *bokat.Error
		if !errors.As(err, &be) || be.Code != bokat.CodeBookingOptionUnavailable || !be.OptionRefreshRequired {
			t.Fatalf("err = %v, want booking_option_unavailable", err)
		}
		if db.Engine() == sqlstore.Postgres && !strings.Contains(be.Detail, "just booked") {
			t.Errorf("detail %q: the exclusion constraint did not decide", be.Detail)
		}
		var n int
		_ = db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM bookings`).Scan(&n)
		if n != 1 {
			t.Errorf("%d bookings", n)
		}
	})
}

// onQueued hears of each write that committed notification jobs: not of a
// refused write, nor of a replay.
func TestLifecycleTellsOfQueuedNotifications(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 23, 6, 0)
	f := sqliteFixture(t, oneProvider, now)
	queued := 0
	l, err := f.lifecycle(func() { queued++ })
	if err != nil {
		t.Fatal(err)
	}
	o := f.run(t, query("vvs", "install_faucet", "11345", "i morgon")).Options[0]
	ctx := context.Background()
	key := func(op, k string) idem.Key {
		return idem.Key{Owner: testPrincipal.OwnerKey(), Operation: op, Key: k}
	}
	refused := confirmInput(o)
	refused.TermsVersion = "fixed_price_terms_v1:x"
	if _, _, err := l.Confirm(ctx, testPrincipal, refused, key(booking.OpConfirm, "k0"), "fp0", stored); err == nil {
		t.Fatal("a confirmation with other terms was accepted")
	}
	if queued != 0 {
		t.Fatalf("onQueued called %d times after a refused write", queued)
	}
	out, _, err := l.Confirm(ctx, testPrincipal, confirmInput(o), key(booking.OpConfirm, "k1"), "fp1", stored)
	if err != nil || queued != 1 {
		t.Fatalf("confirm: %v; onQueued called %d times, want 1", err, queued)
	}
	if _, replay, err := l.Confirm(ctx, testPrincipal, confirmInput(o), key(booking.OpConfirm, "k1"), "fp1", stored); err != nil || !replay || queued != 1 {
		t.Fatalf("replay: %v (replay %v); onQueued called %d times, want still 1", err, replay, queued)
	}
	_, _, err = l.Cancel(ctx, testPrincipal, out.ResourceID, booking.CancelInput{UserConfirmed: true, Reason: "customer_request"},
		key(booking.OpCancel, "k2"), "fp2", stored)
	if err != nil || queued != 2 {
		t.Fatalf("cancel: %v; onQueued called %d times, want 2", err, queued)
	}
}
