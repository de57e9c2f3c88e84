package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

func consentMethods(t *testing.T, db *sqlstore.DB, id string) (string, string) {
	t.Helper()
	var m, c string
	err := db.R().QueryRowContext(context.Background(), `SELECT consent_method, change_consent_method FROM bookings WHERE id = $1`, id).Scan(&m, &c)
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

// Migration 00011 records existing bookings as caller-declared, and a
// change made before it too.
func TestConsentMethodMigration(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		withProvider(t, db, "prv_1")
		if err := insert(t, db, testBooking("bkg_a", "prv_1", t0.Add(24*time.Hour), 60)); err != nil {
			t.Fatal(err)
		}
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			return tx.InsertBooking(ctx, testBooking("bkg_b", "prv_1", t0.Add(48*time.Hour), 60), testContact,
				bokat.BookingConsent{Statement: "ja", Method: bokat.ConsentElicitation}, "cal_b", t0)
		})
		if err != nil {
			t.Fatal(err)
		}
		if m, c := consentMethods(t, db, "bkg_b"); m != "elicitation" || c != "" {
			t.Fatalf("new booking by elicitation: %q %q", m, c)
		}
		if err := db.Exec(ctx, `UPDATE bookings SET rescheduled_at = $1 WHERE id = 'bkg_b'`, sqlstore.Millis(t0)); err != nil {
			t.Fatal(err)
		}
		if err := db.MigrateDownTo(ctx, 10); err != nil {
			t.Fatalf("down to 10: %v", err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("up again: %v", err)
		}
		for id, want := range map[string][2]string{"bkg_a": {"caller_declared", ""}, "bkg_b": {"caller_declared", "caller_declared"}} {
			if m, c := consentMethods(t, db, id); m != want[0] || c != want[1] {
				t.Errorf("%s after 00011: %q %q, want %q", id, m, c, want)
			}
		}
	})
}

func TestElicitationNonceIsSingleUse(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		use := func(nonce string, expires, now time.Time) error {
			return db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.UseElicitationNonce(ctx, nonce, expires, now) })
		}
		if err := use("n1", t0.Add(5*time.Minute), t0); err != nil {
			t.Fatal(err)
		}
		if err := use("n1", t0.Add(5*time.Minute), t0.Add(time.Minute)); !errors.Is(err, bokat.ErrConflict) {
			t.Fatalf("second use: %v, want a conflict", err)
		}
		// A rolled-back write leaves its nonce unused.
		rollback := errors.New("write refused")
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			if err := tx.UseElicitationNonce(ctx, "n2", t0.Add(5*time.Minute), t0); err != nil {
				return err
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatal(err)
		}
		if err := use("n2", t0.Add(5*time.Minute), t0); err != nil {
			t.Fatalf("nonce of a rolled-back write: %v", err)
		}
		// Expired nonces are removed by the next use.
		if err := use("n3", t0.Add(time.Hour), t0.Add(10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM elicitation_nonces`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("%d nonces kept (%v), want 1", n, err)
		}
	})
}
