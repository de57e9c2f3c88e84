package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestBookingKeepsItsTaxEstimate checks that a booking's ROT/RUT estimate
// is stored with it, replaced by a reschedule, and absent when it has none,
// on both engines.
func TestBookingKeepsItsTaxEstimate(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		withProvider(t, db, "p1")
		rot := bokat.TaxReductionEstimate{Kind: "rot", RatePercent: 30, LabourPercent: 80, LabourSEK: 1512,
			ReductionSEK: 453, RulesVersion: "rot_2026-01-01"}
		a := testBooking("bkg_tax", "p1", t0, 90)
		a.TaxReduction = &rot
		if err := insert(t, db, a); err != nil {
			t.Fatal(err)
		}
		got, err := db.OwnedBooking(ctx, "bkg_tax", "pc_1", "")
		if err != nil || got.TaxReduction == nil || *got.TaxReduction != rot {
			t.Fatalf("stored estimate = %+v, %v; want %+v", got.TaxReduction, err, rot)
		}

		moved := got
		moved.SlotStart, moved.SlotEnd, moved.Sequence, moved.RescheduledAt = t0.Add(24*time.Hour), t0.Add(25*time.Hour), 1, t0
		moved.TaxReduction = nil
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.MoveBooking(ctx, moved, testContact, t0) }); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.OwnedBooking(ctx, "bkg_tax", "pc_1", ""); got.TaxReduction != nil {
			t.Errorf("after a reschedule without an estimate: %+v, want none", got.TaxReduction)
		}
		moved.TaxReduction = &rot
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.MoveBooking(ctx, moved, testContact, t0) }); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.OwnedBooking(ctx, "bkg_tax", "pc_1", ""); got.TaxReduction == nil || *got.TaxReduction != rot {
			t.Errorf("after a reschedule with an estimate: %+v, want %+v", got.TaxReduction, rot)
		}
		if nb, err := db.NotificationBooking(ctx, "bkg_tax"); err != nil || nb.TaxReduction == nil || *nb.TaxReduction != rot {
			t.Errorf("notification booking estimate = %+v, %v", nb.TaxReduction, err)
		}

		plain := testBooking("bkg_plain", "p1", t0.Add(48*time.Hour), 60)
		if err := insert(t, db, plain); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.OwnedBooking(ctx, "bkg_plain", "pc_1", ""); got.TaxReduction != nil {
			t.Errorf("a booking without estimate reads back %+v", got.TaxReduction)
		}
	})
}
