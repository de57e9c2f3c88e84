package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// The booking fixtures, shared with the tests of the privacy rules.
var (
	t0          = sqlstoretest.T0
	testContact = sqlstoretest.Contact
	testBooking = sqlstoretest.Booking
)

// withProvider stores a provider to book.
func withProvider(t *testing.T, db *sqlstore.DB, id string) {
	t.Helper()
	sqlstoretest.WithProvider(t, db, id)
}

func insert(t *testing.T, db *sqlstore.DB, b bokat.Booking) error {
	t.Helper()
	return sqlstoretest.InsertBooking(t, db, b)
}

func TestBookingStore(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		withProvider(t, db, "p1")
		withProvider(t, db, "p2")
		a := testBooking("bkg_a", "p1", t0, 90)
		if err := insert(t, db, a); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			b    bokat.Booking
			ok   bool
		}{
			{"overlapping the start", testBooking("bkg_b", "p1", t0.Add(-30*time.Minute), 60), false},
			{"inside", testBooking("bkg_c", "p1", t0.Add(30*time.Minute), 15), false},
			{"same slot", testBooking("bkg_d", "p1", t0, 90), false},
			{"touching the end", testBooking("bkg_e", "p1", t0.Add(90*time.Minute), 60), true},
			{"touching the start", testBooking("bkg_f", "p1", t0.Add(-60*time.Minute), 60), true},
			{"another provider", testBooking("bkg_g", "p2", t0, 90), true},
		}
		for _, tc := range tests {
			err := insert(t, db, tc.b)
			if tc.ok && err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			if !tc.ok && (!errors.Is(err, booking.ErrSlotTaken) || !errors.Is(err, bokat.ErrConflict)) {
				t.Errorf("%s: err = %v, want ErrSlotTaken", tc.name, err)
			}
		}
		// A refused booking left nothing behind.
		if _, err := db.NotificationBooking(ctx, "bkg_b"); !errors.Is(err, bokat.ErrNotFound) {
			t.Errorf("refused booking: %v", err)
		}

		// Ownership.
		if got, err := db.OwnedBooking(ctx, "bkr_bkg_a", "pc_1", ""); err != nil || got.ID != "bkg_a" || got.SlotLabel != a.SlotLabel ||
			!got.SlotStart.Equal(a.SlotStart) || got.Quantity != 1 || got.ServiceLabelEN != "Faucet" {
			t.Errorf("owned by request id: %+v %v", got, err)
		}
		for _, owner := range [][2]string{{"pc_2", ""}, {"pc_1", "u1"}} {
			if _, err := db.OwnedBooking(ctx, "bkg_a", owner[0], owner[1]); !errors.Is(err, bokat.ErrNotFound) {
				t.Errorf("owner %v: err = %v", owner, err)
			}
		}

		// Moving into another booking's time is refused; moving within its own is fine.
		moved := a
		moved.SlotStart, moved.SlotEnd = t0.Add(60*time.Minute), t0.Add(150*time.Minute)
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.MoveBooking(ctx, moved, testContact, t0) })
		if !errors.Is(err, booking.ErrSlotTaken) {
			t.Errorf("move over bkg_e: err = %v", err)
		}
		moved.SlotStart, moved.SlotEnd, moved.Sequence, moved.RescheduledAt = t0, t0.Add(90*time.Minute), 1, t0.Add(time.Hour)
		moved.PriceSEK = 1990
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.MoveBooking(ctx, moved, testContact, t0) }); err != nil {
			t.Errorf("move in place: %v", err)
		}

		// Delivery outcomes are written back; queued ones are empty.
		if err := db.SetConfirmationStatus(ctx, "bkg_a", bokat.RecipientCustomer, bokat.NotificationSent); err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			return tx.SetConfirmationStatus(ctx, "bkg_a", bokat.RecipientProvider, bokat.NotificationFailed)
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, args := range map[string][3]string{
			"unknown booking":   {"bkg_nope", bokat.RecipientCustomer, bokat.NotificationSent},
			"unknown recipient": {"bkg_a", "webhook", bokat.NotificationSent},
			"pending":           {"bkg_a", bokat.RecipientCustomer, bokat.NotificationPending},
		} {
			if err := db.SetConfirmationStatus(ctx, args[0], args[1], args[2]); err == nil {
				t.Errorf("%s: no error", name)
			}
		}
		nb, err := db.NotificationBooking(ctx, "bkg_a")
		if err != nil {
			t.Fatal(err)
		}
		if nb.CustomerConfirmationStatus != "sent" || nb.ProviderConfirmationStatus != "failed" || nb.Contact != testContact ||
			nb.PriceSEK != 1990 || nb.Sequence != 1 || !nb.RescheduledAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("notification booking = %+v", nb)
		}

		// Cancelling frees the slot and clears the delivery outcomes.
		c := nb.Booking
		c.Status, c.CancelledAt, c.CancelReason, c.Sequence = bokat.BookingCancelled, t0.Add(2*time.Hour), "other", 2
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.CancelBooking(ctx, c, "notes", t0) }); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.CancelBooking(ctx, c, "notes", t0) }); !errors.Is(err, bokat.ErrNotFound) {
			t.Errorf("cancel twice: %v", err)
		}
		if err := insert(t, db, testBooking("bkg_h", "p1", t0, 90)); err != nil {
			t.Errorf("the cancelled booking's slot is not free: %v", err)
		}
		got, _ := db.OwnedBooking(ctx, "bkg_a", "pc_1", "")
		if got.Status != "cancelled" || got.CustomerConfirmationStatus != "" || got.Sequence != 2 || got.CancelReason != "other" {
			t.Errorf("cancelled = %+v", got)
		}
		list, err := db.ProviderBookings(ctx, "p1", t0.Add(-24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, b := range list {
			ids = append(ids, b.ID)
		}
		if fmt.Sprint(ids) != "[bkg_f bkg_a bkg_h bkg_e]" {
			t.Errorf("provider bookings %v", ids)
		}
	})
}

// A provider's bookings read for its feed carry, field by field, what the
// full booking holds: confirmed, moved (with a destination) and cancelled.
func TestProviderBookingsCarryTheBookingsFields(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		withProvider(t, db, "p1")
		kept, moved, cancelled := testBooking("bkg_k", "p1", t0, 60), testBooking("bkg_m", "p1", t0.Add(2*time.Hour), 60),
			testBooking("bkg_c", "p1", t0.Add(4*time.Hour), 60)
		moved.DestinationPostcode, moved.PriceSEK, moved.TermsVersion = "41101", 2490, "moving_terms_v2"
		cancelled.ServiceLabelSV, cancelled.Postcode = "Byte av element", "96140"
		for _, b := range []bokat.Booking{kept, moved, cancelled} {
			if err := insert(t, db, b); err != nil {
				t.Fatal(err)
			}
		}
		moved.SlotStart, moved.SlotEnd = t0.Add(6*time.Hour), t0.Add(7*time.Hour)
		moved.RescheduledAt, moved.Sequence = t0.Add(time.Minute), 1
		cancelled.Status, cancelled.CancelledAt, cancelled.CancelReason, cancelled.Sequence = bokat.BookingCancelled, t0.Add(3*time.Minute), "other", 1
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			if err := tx.MoveBooking(ctx, moved, sqlstoretest.Contact, t0.Add(time.Minute)); err != nil {
				return err
			}
			return tx.CancelBooking(ctx, cancelled, "", t0.Add(3*time.Minute))
		})
		if err != nil {
			t.Fatal(err)
		}
		list, err := db.ProviderBookings(ctx, "p1", t0.Add(-time.Hour))
		if err != nil || len(list) != 3 {
			t.Fatalf("%d bookings, %v", len(list), err)
		}
		for i, id := range []string{"bkg_k", "bkg_c", "bkg_m"} {
			full, err := db.OwnedBooking(ctx, id, "pc_1", "")
			if err != nil {
				t.Fatal(err)
			}
			want := bokat.CalendarBooking{ID: full.ID, Status: full.Status, ServiceLabelSV: full.ServiceLabelSV,
				SlotStart: full.SlotStart, SlotEnd: full.SlotEnd, PriceSEK: full.PriceSEK, TermsVersion: full.TermsVersion,
				Postcode: full.Postcode, DestinationPostcode: full.DestinationPostcode, ConfirmedAt: full.ConfirmedAt,
				RescheduledAt: full.RescheduledAt, CancelledAt: full.CancelledAt, Sequence: full.Sequence}
			if !reflect.DeepEqual(list[i], want) {
				t.Errorf("bookings[%d] = %+v\nwant %+v", i, list[i], want)
			}
		}
		if m := list[2]; m.DestinationPostcode != "41101" || m.RescheduledAt.IsZero() || m.Sequence != 1 || m.PriceSEK != 2490 ||
			!m.SlotStart.Equal(t0.Add(6*time.Hour)) {
			t.Errorf("the moved booking: %+v", m)
		}
		if c := list[1]; c.Active() || c.CancelledAt.IsZero() || c.ServiceLabelSV != "Byte av element" || c.Postcode != "96140" {
			t.Errorf("the cancelled booking: %+v", c)
		}
	})
}
