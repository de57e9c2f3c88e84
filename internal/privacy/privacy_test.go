package privacy_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/followup"
	"bokat/internal/privacy"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
)

// service is the privacy use cases over db.
func service(db *sqlstore.DB) *privacy.Service { return privacy.New(sqlstore.Bind[privacy.Tx](db)) }

func TestErasePerson(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		sqlstoretest.WithProvider(t, db, "p1")
		now := sqlstoretest.T0.Add(24 * time.Hour)
		for _, b := range []bokat.Booking{sqlstoretest.Booking("bkg_past", "p1", sqlstoretest.T0, 60), sqlstoretest.Booking("bkg_future", "p1", now.Add(time.Hour), 60)} {
			if err := sqlstoretest.InsertBooking(t, db, b); err != nil {
				t.Fatal(err)
			}
		}
		other := sqlstoretest.Booking("bkg_other", "p1", sqlstoretest.T0.Add(2*time.Hour), 60)
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			c := sqlstoretest.Contact
			c.Email, c.Phone = "gustav@example.se", "+46709999999"
			if err := tx.InsertBooking(ctx, other, c, bokat.BookingConsent{}, "cal_other", sqlstoretest.T0); err != nil {
				return err
			}
			if _, err := tx.SignInUser(ctx, "usr_greta", "greta@example.se", sqlstoretest.T0); err != nil {
				return err
			}
			for _, q := range []string{
				`INSERT INTO oauth_sessions (token_hash, user_id, created_at, expires_at) VALUES ('sess', 'usr_greta', 0, 1)`,
				`INSERT INTO oauth_signin_codes (id, email, email_hash, browser_hash, code_hash, created_at, expires_at)
				 VALUES ('code', 'greta@example.se', 'h', 'b', 'c', 0, 1)`,
			} {
				if _, err := tx.Q().ExecContext(ctx, q); err != nil {
					return err
				}
			}
			return tx.InsertFollowUpRequest(ctx, followup.Record{ID: "req_greta", SessionID: "s", OwnerClientID: "pc_1",
				VerticalID: "vvs", JobTypeID: "install_faucet", Status: "ready_to_send", Description: "Kranen",
				CustomerJSON: []byte(`{"phone":"070-123 45 67","email":"other@example.se"}`), LocationJSON: []byte(`{}`),
				TimingJSON: []byte(`{}`), CustomerNextStep: "vänta", Source: "test", Locale: "sv-SE", Timezone: "Europe/Stockholm",
				CreatedAt: sqlstoretest.T0})
		})
		if err != nil {
			t.Fatal(err)
		}

		// Without a cancel function, the booking still to come refuses it all.
		_, err = service(db).ErasePerson(ctx, "greta@example.se", "", now, nil)
		var future *privacy.FutureBookingsError
		if !errors.As(err, &future) || len(future.IDs) != 1 || future.IDs[0] != "bkg_future" {
			t.Fatalf("erase with a future booking: %v", err)
		}
		if got, _ := db.PersonRecords(ctx, "greta@example.se", ""); len(got.Bookings) != 2 || len(got.Accounts) != 1 {
			t.Fatalf("a refused erasure changed something: %d bookings, %d accounts", len(got.Bookings), len(got.Accounts))
		}

		var cancelled []string
		out, err := service(db).ErasePerson(ctx, "greta@example.se", "0701234567", now, func(ctx context.Context, tx privacy.Tx, b bokat.Booking) error {
			cancelled = append(cancelled, b.ID)
			b.Status, b.CancelledAt, b.CancelReason = bokat.BookingCancelled, now, "other"
			return tx.CancelBooking(ctx, b, "", now)
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Bookings, []string{"bkg_future", "bkg_past"}) || !slices.Equal(out.Cancelled, []string{"bkg_future"}) ||
			!slices.Equal(cancelled, out.Cancelled) || !slices.Equal(out.Requests, []string{"req_greta"}) ||
			!slices.Equal(out.Accounts, []string{"usr_greta"}) {
			t.Errorf("erased %+v", out)
		}
		if got, _ := db.PersonRecords(ctx, "greta@example.se", "+46701234567"); len(got.Bookings)+len(got.Requests)+len(got.Accounts) != 0 {
			t.Errorf("after erasure the person still has %+v", got)
		}
		for _, q := range []string{`SELECT COUNT(*) FROM oauth_sessions`, `SELECT COUNT(*) FROM oauth_signin_codes`, `SELECT COUNT(*) FROM users`} {
			var n int
			if err := db.R().QueryRowContext(ctx, q).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s: %d (%v)", q, n, err)
			}
		}
		if nb, err := db.NotificationBooking(ctx, "bkg_other"); err != nil || nb.Contact.Email != "gustav@example.se" {
			t.Errorf("someone else's booking: %+v %v", nb.Contact, err)
		}
		if nb, err := db.NotificationBooking(ctx, "bkg_future"); err != nil || nb.Status != bokat.BookingCancelled || nb.PriceSEK != 1890 {
			t.Errorf("the cancelled booking keeps its facts: %+v %v", nb.Booking, err)
		}
	})
}

func TestCorrectPerson(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		sqlstoretest.WithProvider(t, db, "p1")
		for _, b := range []bokat.Booking{sqlstoretest.Booking("bkg_one", "p1", sqlstoretest.T0, 60), sqlstoretest.Booking("bkg_two", "p1", sqlstoretest.T0.Add(2*time.Hour), 60)} {
			if err := sqlstoretest.InsertBooking(t, db, b); err != nil {
				t.Fatal(err)
			}
		}
		other := sqlstoretest.Booking("bkg_other", "p1", sqlstoretest.T0.Add(4*time.Hour), 60)
		gustav := sqlstoretest.Contact
		gustav.Email, gustav.Phone = "gustav@example.se", "+46709999999"
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			if err := tx.InsertBooking(ctx, other, gustav, bokat.BookingConsent{}, "cal_other", sqlstoretest.T0); err != nil {
				return err
			}
			if err := tx.InsertNotificationJob(ctx, bokat.NotificationJob{ID: "nj_one", BookingID: "bkg_one",
				EventType: "booking.confirmed", Recipient: bokat.RecipientCustomer, Status: bokat.NotificationPending,
				NextAttemptAt: sqlstoretest.T0, CreatedAt: sqlstoretest.T0}); err != nil {
				return err
			}
			return tx.InsertFollowUpRequest(ctx, followup.Record{ID: "req_greta", SessionID: "s", OwnerClientID: "pc_1",
				VerticalID: "vvs", JobTypeID: "install_faucet", Status: "ready_to_send", Description: "Kranen",
				CustomerJSON: []byte(`{"first_name":"Greta","last_name":"Gåsfot","phone":"070-123 45 67","email":"greta@example.se"}`),
				LocationJSON: []byte(`{"address":"Drottninggatan 1"}`), TimingJSON: []byte(`{}`), CustomerNextStep: "vänta",
				Source: "test", Locale: "sv-SE", Timezone: "Europe/Stockholm", CreatedAt: sqlstoretest.T0})
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := service(db).CorrectPerson(ctx, "greta@example.se", "", privacy.ContactCorrection{}); err == nil {
			t.Error("a correction setting nothing: want an error")
		}

		name, email, phone := "Greta Nyberg", "greta.nyberg@example.se", "073-000 11 22"
		out, err := service(db).CorrectPerson(ctx, " GRETA@example.se", "", privacy.ContactCorrection{Name: &name, Email: &email, Phone: &phone})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Bookings, []string{"bkg_one", "bkg_two"}) || !slices.Equal(out.Requests, []string{"req_greta"}) {
			t.Errorf("corrected %+v, want bkg_one, bkg_two and req_greta", out)
		}
		if got, err := db.PersonRecords(ctx, "greta@example.se", "0701234567"); err != nil || len(got.Bookings)+len(got.Requests) != 0 {
			t.Errorf("found by the old address or number after the correction: %+v %v", got, err)
		}
		got, err := db.PersonRecords(ctx, "", "+46730001122")
		if err != nil || len(got.Bookings) != 2 || len(got.Requests) != 1 {
			t.Fatalf("found by the new number: %+v %v", got, err)
		}
		want := sqlstoretest.Contact
		want.Name, want.Email, want.Phone = name, email, phone
		for _, b := range got.Bookings {
			if b.Contact != want || b.Consent.Statement != "ja tack" {
				t.Errorf("%s after the correction: %+v %q, want %+v", b.ID, b.Contact, b.Consent.Statement, want)
			}
		}
		var cust map[string]string
		if err := json.Unmarshal(got.Requests[0].CustomerJSON, &cust); err != nil ||
			!maps.Equal(cust, map[string]string{"name": name, "phone": phone, "email": email}) ||
			string(got.Requests[0].LocationJSON) != `{"address":"Drottninggatan 1"}` {
			t.Errorf("request after the correction: %s %s (%v); the whole name replaced, the location kept",
				got.Requests[0].CustomerJSON, got.Requests[0].LocationJSON, err)
		}
		// The queued message reads the booking when it is sent: it goes to
		// the corrected address.
		if nb, err := db.NotificationBooking(ctx, "bkg_one"); err != nil || nb.Contact.Email != email {
			t.Errorf("the booking a queued message reads: %+v %v", nb.Contact, err)
		}
		for _, id := range []string{"bkg_one", "bkg_two"} {
			values, _, _, _ := sqlstoretest.ContactRow(t, db, id)
			for _, v := range values {
				if strings.Contains(v, "Nyberg") || strings.Contains(v, "nyberg@") || strings.Contains(v, "0001122") {
					t.Errorf("%s stores the correction in plain text: %q", id, v)
				}
			}
		}
		if nb, err := db.NotificationBooking(ctx, "bkg_other"); err != nil || nb.Contact != gustav {
			t.Errorf("someone else's booking: %+v %v", nb.Contact, err)
		}
	})
}

// TestResealPassesOverUnopenableRows: rows sealed with a key no longer
// given, more of them than a batch and first in id order, do not keep a
// pass from re-sealing the rows after them, and the pass ends.
func TestResealPassesOverUnopenableRows(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		lostKey, key, pepper := make([]byte, webhook.KeySize), make([]byte, webhook.KeySize), make([]byte, 32)
		rand.Read(lostKey)
		rand.Read(key)
		rand.Read(pepper)
		sqlstoretest.WithProvider(t, db, "p1")
		const batch, unopenable = 4, 11 // more than two batches of rows that do not open
		db = sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, lostKey))
		for i := range unopenable {
			if err := sqlstoretest.InsertBooking(t, db, sqlstoretest.Booking(fmt.Sprintf("bkg_a%02d", i), "p1", sqlstoretest.T0.Add(time.Duration(i)*time.Hour), 60)); err != nil {
				t.Fatal(err)
			}
		}
		var legacy []string
		for i := range 3 {
			id := fmt.Sprintf("bkg_z%02d", i)
			legacy = append(legacy, id)
			if err := sqlstoretest.InsertBooking(t, db, sqlstoretest.Booking(id, "p1", sqlstoretest.T0.Add(time.Duration(100+i)*time.Hour), 60)); err != nil {
				t.Fatal(err)
			}
			// Written before sealing: plain text, no key id, no index.
			if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
				_, err := tx.Q().ExecContext(ctx, `UPDATE bookings SET customer_name = 'Greta Gåsfot', contact_key_id = NULL,
					customer_email = 'greta@example.se', customer_phone = '+46701234567', service_address = 'Drottninggatan 1',
					consent_statement = 'ja tack', customer_email_index = '', customer_phone_index = '' WHERE id = $1`, id)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		db = sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, key)) // lostKey is gone
		var (
			cur     privacy.ResealCursor
			total   int
			skipped int
		)
		for calls := 0; !cur.Done(); calls++ {
			if calls > unopenable+len(legacy) {
				t.Fatal("the re-seal pass does not end")
			}
			n, err := service(db).ResealContacts(ctx, &cur, batch)
			if err != nil && !errors.Is(err, privacy.ErrDoNotOpen) {
				t.Fatal(err)
			}
			if err != nil {
				skipped += strings.Count(err.Error(), "bkg_a")
			}
			total += n
		}
		if total != len(legacy) || skipped != unopenable {
			t.Errorf("pass re-sealed %d rows and passed over %d; want %d and %d", total, skipped, len(legacy), unopenable)
		}
		for _, id := range legacy {
			if _, keyID, emailIndex, _ := sqlstoretest.ContactRow(t, db, id); keyID != webhook.KeyID(key) || emailIndex == "" {
				t.Errorf("%s after the pass: key %q index %q, want re-sealed with the current key", id, keyID, emailIndex)
			}
		}
	})
}

// TestResealPass: one pass re-seals every row that needs it and passes over
// rows that do not open, reporting them without stopping; a store that
// fails ends the pass after one report, to be tried again at the next.
func TestResealPass(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		oldKey, lostKey, newKey, pepper := make([]byte, webhook.KeySize), make([]byte, webhook.KeySize),
			make([]byte, webhook.KeySize), make([]byte, 32)
		for _, b := range [][]byte{oldKey, lostKey, newKey, pepper} {
			rand.Read(b)
		}
		sqlstoretest.WithProvider(t, db, "p1")
		if err := sqlstoretest.InsertBooking(t, sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, lostKey)),
			sqlstoretest.Booking("bkg_lost", "p1", sqlstoretest.T0, 60)); err != nil {
			t.Fatal(err)
		}
		if err := sqlstoretest.InsertBooking(t, sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, oldKey)),
			sqlstoretest.Booking("bkg_old", "p1", sqlstoretest.T0.Add(2*time.Hour), 60)); err != nil {
			t.Fatal(err)
		}
		db = sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, newKey, oldKey))
		var reports []error
		report := func(err error, resealed int) {
			if resealed != 1 {
				t.Errorf("report after %d re-sealed rows, want 1", resealed)
			}
			reports = append(reports, err)
		}
		if n := service(db).ResealPass(ctx, report); n != 1 {
			t.Errorf("pass re-sealed %d rows, want bkg_old only", n)
		}
		if len(reports) != 1 || !errors.Is(reports[0], privacy.ErrDoNotOpen) || !strings.Contains(reports[0].Error(), "bkg_lost") {
			t.Errorf("pass reported %v, want once that bkg_lost does not open", reports)
		}
		if _, keyID, _, _ := sqlstoretest.ContactRow(t, db, "bkg_old"); keyID != webhook.KeyID(newKey) {
			t.Errorf("bkg_old after the pass: key %q, want the new key", keyID)
		}

		closed := sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, newKey))
		if err := closed.Close(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		reports = nil
		n := service(closed).ResealPass(ctx, func(err error, resealed int) {
			if reports = append(reports, err); len(reports) > 1 {
				cancel() // the pass did not end: stop it
			}
		})
		if n != 0 || len(reports) != 1 || errors.Is(reports[0], privacy.ErrDoNotOpen) {
			t.Errorf("pass on a closed store: %d rows, reports %v; want none and one report", n, reports)
		}
	})
}

// TestEraseJudgesTestBookingsOnTheirOwnersClock: a test booking still to
// come on the server's clock but ended on its owner's test clock (thirty
// days ahead) is past for an erasure; one still to come on the owner's
// clock is cancelled at the owner's now, on each engine.
func TestEraseJudgesTestBookingsOnTheirOwnersClock(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		sqlstoretest.WithProvider(t, db, "p1")
		now := sqlstoretest.T0.Add(24 * time.Hour)
		const ahead = 30 * 24 * time.Hour
		if _, err := db.AdvanceTestClock(ctx, "pc_sandbox", "", now, func(time.Duration) (time.Duration, error) { return ahead, nil }); err != nil {
			t.Fatal(err)
		}
		for _, b := range []bokat.Booking{sqlstoretest.Booking("bkg_ended", "p1", now.Add(2*time.Hour), 60),
			sqlstoretest.Booking("bkg_ahead", "p1", now.Add(ahead+48*time.Hour), 60)} {
			b.Mode, b.OwnerClientID = bokat.ModeTest, "pc_sandbox"
			if err := sqlstoretest.InsertBooking(t, db, b); err != nil {
				t.Fatal(err)
			}
		}
		_, err := service(db).ErasePerson(ctx, "greta@example.se", "", now, nil)
		var future *privacy.FutureBookingsError
		if !errors.As(err, &future) || !slices.Equal(future.IDs, []string{"bkg_ahead"}) {
			t.Fatalf("erase without a cancel: %v; want only bkg_ahead still to come", err)
		}
		out, err := service(db).ErasePerson(ctx, "greta@example.se", "", now, privacy.CancelAsLifecycle(now))
		if err != nil || !slices.Equal(out.Cancelled, []string{"bkg_ahead"}) || !slices.Equal(out.Bookings, []string{"bkg_ahead", "bkg_ended"}) {
			t.Fatalf("erase = %+v, %v; want both erased, bkg_ahead cancelled", out, err)
		}
		var cancelled int64
		if err := db.R().QueryRowContext(ctx, `SELECT cancelled_at FROM bookings WHERE id = 'bkg_ahead'`).Scan(&cancelled); err != nil ||
			!time.UnixMilli(cancelled).Equal(now.Add(ahead)) {
			t.Errorf("cancelled at %v (%v), want the owner's now %v", time.UnixMilli(cancelled), err, now.Add(ahead))
		}
	})
}
