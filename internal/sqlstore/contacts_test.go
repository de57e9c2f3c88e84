package sqlstore_test

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

	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
)

func TestNormalisePhone(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"070-123 45 67", "+46701234567"},
		{"+46 70 123 45 67", "+46701234567"},
		{"0046701234567", "+46701234567"},
		{"(08) 12 34 56", "+468123456"},
		{"+1 (555) 010-0199", "+15550100199"},
		{"  ", ""},
	}
	for _, tc := range tests {
		if got := sqlstore.NormalisePhone(tc.in); got != tc.want {
			t.Errorf("NormalisePhone(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// contactRow reads a booking's stored contact columns, key id and index.
func contactRow(t *testing.T, db *sqlstore.DB, id string) (values []string, keyID, emailIndex, phoneIndex string) {
	t.Helper()
	values = make([]string, 8)
	dest := []any{}
	for i := range values {
		dest = append(dest, &values[i])
	}
	var key *string
	dest = append(dest, &key, &emailIndex, &phoneIndex)
	err := db.R().QueryRowContext(context.Background(), `SELECT customer_name, customer_first_name, customer_last_name,
		customer_phone, customer_email, service_address, destination_address, consent_statement,
		contact_key_id, customer_email_index, customer_phone_index FROM bookings WHERE id = $1`, id).Scan(dest...)
	if err != nil {
		t.Fatal(err)
	}
	if key != nil {
		keyID = *key
	}
	return values, keyID, emailIndex, phoneIndex
}

func TestContactDataIsSealedAndReSealed(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		oldKey, newKey, pepper := make([]byte, webhook.KeySize), make([]byte, webhook.KeySize), make([]byte, 32)
		rand.Read(oldKey)
		rand.Read(newKey)
		rand.Read(pepper)
		oldVault := sqlstoretest.VaultWith(t, pepper, oldKey)
		db = sqlstoretest.Reopen(t, db, oldVault)
		withProvider(t, db, "p1")
		if err := insert(t, db, testBooking("bkg_sealed", "p1", t0, 60)); err != nil {
			t.Fatal(err)
		}
		values, keyID, emailIndex, phoneIndex := contactRow(t, db, "bkg_sealed")
		if keyID != webhook.KeyID(oldKey) {
			t.Errorf("contact_key_id %q, want the sealing key's id", keyID)
		}
		for _, v := range values {
			for _, plain := range []string{"Greta", "+46701234567", "greta@", "Drottninggatan", "ja tack"} {
				if strings.Contains(v, plain) {
					t.Errorf("stored column %q holds %q", v, plain)
				}
			}
		}
		if emailIndex != oldVault.EmailIndex(" GRETA@example.se") || phoneIndex != oldVault.PhoneIndex("070-123 45 67") {
			t.Errorf("blind index %q %q does not match the normalised address and number", emailIndex, phoneIndex)
		}

		// A row written before sealing: plain text, no key id, no index.
		if err := insert(t, db, testBooking("bkg_legacy", "p1", t0.Add(2*time.Hour), 60)); err != nil {
			t.Fatal(err)
		}
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.Q().ExecContext(ctx, `UPDATE bookings SET customer_name = 'Greta Gåsfot', customer_phone = '+46701234567',
				customer_email = 'greta@example.se', service_address = 'Drottninggatan 1', consent_statement = 'ja tack',
				contact_key_id = NULL, customer_email_index = '', customer_phone_index = '' WHERE id = 'bkg_legacy'`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		nb, err := db.NotificationBooking(ctx, "bkg_legacy")
		if err != nil || nb.Contact != testContact {
			t.Fatalf("legacy row before re-sealing: %+v %v", nb.Contact, err)
		}
		if n, err := db.ResealContacts(ctx, new(sqlstore.ResealCursor), 10); err != nil || n != 1 {
			t.Fatalf("re-seal the legacy row: %d %v, want 1", n, err)
		}
		values, keyID, emailIndex, _ = contactRow(t, db, "bkg_legacy")
		if keyID != webhook.KeyID(oldKey) || values[0] == "Greta Gåsfot" || emailIndex == "" {
			t.Errorf("legacy row after re-sealing: key %q name %q index %q", keyID, values[0], emailIndex)
		}
		if n, err := db.ResealContacts(ctx, new(sqlstore.ResealCursor), 10); err != nil || n != 0 {
			t.Errorf("second re-seal: %d %v, want nothing left", n, err)
		}

		// Rotation: the new key seals, the old one still opens, re-sealing
		// moves every row to the new key, after which the old key can go.
		db = sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, newKey, oldKey))
		if n, err := db.ResealContacts(ctx, new(sqlstore.ResealCursor), 1); err != nil || n != 1 {
			t.Fatalf("first re-seal batch: %d %v, want 1", n, err)
		}
		if n, err := db.ResealContacts(ctx, new(sqlstore.ResealCursor), 10); err != nil || n != 1 {
			t.Fatalf("second re-seal batch: %d %v, want 1", n, err)
		}
		db = sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, newKey))
		for _, id := range []string{"bkg_sealed", "bkg_legacy"} {
			if _, keyID, newIndex, _ := contactRow(t, db, id); keyID != webhook.KeyID(newKey) || newIndex != emailIndex {
				t.Errorf("%s after rotation: key %q, index changed %v", id, keyID, newIndex != emailIndex)
			}
			nb, err := db.NotificationBooking(ctx, id)
			if err != nil || nb.Contact != testContact {
				t.Errorf("%s opens after rotation as %+v, %v", id, nb.Contact, err)
			}
		}

		// Without the key a row was sealed with, reading fails and says why,
		// and re-sealing skips the row, names it, and re-seals the others.
		db = sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, oldKey))
		if _, err := db.NotificationBooking(ctx, "bkg_sealed"); !errors.Is(err, webhook.ErrUnknownKey) {
			t.Errorf("read with a keyring lacking the key: %v, want ErrUnknownKey", err)
		}
		if err := insert(t, db, testBooking("bkg_later", "p1", t0.Add(4*time.Hour), 60)); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.Q().ExecContext(ctx, `UPDATE bookings SET customer_name = 'Greta Gåsfot', contact_key_id = NULL,
				customer_email = 'greta@example.se', customer_phone = '+46701234567', service_address = 'Drottninggatan 1',
				consent_statement = 'ja tack' WHERE id = 'bkg_later'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		n, err := db.ResealContacts(ctx, new(sqlstore.ResealCursor), 10)
		if n != 1 || !errors.Is(err, webhook.ErrUnknownKey) || !strings.Contains(err.Error(), "bkg_sealed") ||
			strings.Contains(err.Error(), "Greta") {
			t.Errorf("re-seal beside unopenable rows: %d, %v; want 1 and an error naming bkg_sealed", n, err)
		}
		if nb, err := db.NotificationBooking(ctx, "bkg_later"); err != nil || nb.Contact != testContact {
			t.Errorf("the openable row after re-sealing: %+v %v", nb.Contact, err)
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
		withProvider(t, db, "p1")
		const batch, unopenable = 4, 11 // more than two batches of rows that do not open
		db = sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, lostKey))
		for i := range unopenable {
			if err := insert(t, db, testBooking(fmt.Sprintf("bkg_a%02d", i), "p1", t0.Add(time.Duration(i)*time.Hour), 60)); err != nil {
				t.Fatal(err)
			}
		}
		var legacy []string
		for i := range 3 {
			id := fmt.Sprintf("bkg_z%02d", i)
			legacy = append(legacy, id)
			if err := insert(t, db, testBooking(id, "p1", t0.Add(time.Duration(100+i)*time.Hour), 60)); err != nil {
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
			cur     sqlstore.ResealCursor
			total   int
			skipped int
		)
		for calls := 0; !cur.Done(); calls++ {
			if calls > unopenable+len(legacy) {
				t.Fatal("the re-seal pass does not end")
			}
			n, err := db.ResealContacts(ctx, &cur, batch)
			if err != nil && !errors.Is(err, sqlstore.ErrDoNotOpen) {
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
			if _, keyID, emailIndex, _ := contactRow(t, db, id); keyID != webhook.KeyID(key) || emailIndex == "" {
				t.Errorf("%s after the pass: key %q index %q, want re-sealed with the current key", id, keyID, emailIndex)
			}
		}
	})
}

func TestRequestContactDataIsSealed(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		r := followup.Record{ID: "req_1", SessionID: "s", OwnerClientID: "pc_1", VerticalID: "vvs",
			JobTypeID: "install_faucet", Status: "ready_to_send", Description: "Kranen hos Greta droppar",
			CustomerJSON: []byte(`{"name":"Greta Gåsfot","phone":"070-123 45 67","email":"Greta@Example.se"}`),
			LocationJSON: []byte(`{"address":"Drottninggatan 1","postcode":"111 22"}`), Postcode: "111 22",
			TimingJSON: []byte(`{}`), CustomerNextStep: "vänta", Source: "test", Locale: "sv-SE", Timezone: "Europe/Stockholm",
			ConsentStatement: "ja tack", CreatedAt: t0}
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.InsertFollowUpRequest(ctx, r) }); err != nil {
			t.Fatal(err)
		}
		var raw, emailIndex, phoneIndex string
		err := db.R().QueryRowContext(ctx, `SELECT customer_json || location_json || description || consent_statement,
			customer_email_index, customer_phone_index FROM follow_up_requests WHERE id = 'req_1'`).Scan(&raw, &emailIndex, &phoneIndex)
		if err != nil {
			t.Fatal(err)
		}
		for _, plain := range []string{"Greta", "070", "Drottninggatan", "ja tack", "droppar"} {
			if strings.Contains(raw, plain) {
				t.Errorf("stored request holds %q", plain)
			}
		}
		v := sqlstoretest.Vault(t)
		if emailIndex == "" || phoneIndex == "" || emailIndex == v.EmailIndex("greta@example.se") {
			t.Errorf("blind index %q %q: empty, or not keyed with the store's own vault", emailIndex, phoneIndex)
		}
		got, err := db.FollowUpRequest(ctx, "req_1")
		if err != nil {
			t.Fatal(err)
		}
		if string(got.CustomerJSON) != string(r.CustomerJSON) || string(got.LocationJSON) != string(r.LocationJSON) ||
			got.Description != r.Description || got.ConsentStatement != r.ConsentStatement {
			t.Errorf("request opens as %s %s %q %q", got.CustomerJSON, got.LocationJSON, got.Description, got.ConsentStatement)
		}
	})
}

func TestNoVaultNoContactWrites(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	db = sqlstoretest.Reopen(t, db, nil)
	withProvider(t, db, "p1")
	if err := insert(t, db, testBooking("bkg_x", "p1", t0, 60)); !errors.Is(err, sqlstore.ErrNoVault) {
		t.Errorf("insert without a vault: %v, want ErrNoVault", err)
	}
}

// BenchmarkSealBookingContact measures the sealing work one confirmation
// adds: eight AES-256-GCM seals (the contact columns and the consent
// statement) and the two blind-index hashes.
func BenchmarkSealBookingContact(b *testing.B) {
	v := sqlstoretest.Vault(b)
	values := []string{testContact.Name, "", "", testContact.Phone, testContact.Email, testContact.ServiceAddress, "",
		"Kunden har godkänt bokningen i chatten"}
	for b.Loop() {
		for i, s := range values {
			if s == "" {
				continue
			}
			if _, _, err := v.Keys.Seal([]byte(s), "bookings\x00bkg_01\x00"+string(rune('a'+i))); err != nil {
				b.Fatal(err)
			}
		}
		_ = v.EmailIndex(testContact.Email)
		_ = v.PhoneIndex(testContact.Phone)
	}
}

func TestPersonRecords(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		withProvider(t, db, "p1")
		if err := insert(t, db, testBooking("bkg_greta", "p1", t0, 60)); err != nil {
			t.Fatal(err)
		}
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.SignInUser(ctx, "usr_greta", "greta@example.se", t0)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name            string
			email, phone    string
			bookings, users int
		}{
			{"e-mail in another spelling", " Greta@EXAMPLE.se ", "", 1, 1},
			{"phone in national form", "", "070-123 45 67", 1, 0},
			{"both", "greta@example.se", "+46701234567", 1, 1},
			{"someone else", "gustav@example.se", "+46709999999", 0, 0},
		}
		for _, tc := range tests {
			got, err := db.PersonRecords(ctx, tc.email, tc.phone)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if len(got.Bookings) != tc.bookings || len(got.Accounts) != tc.users {
				t.Errorf("%s: %d bookings, %d accounts; want %d, %d", tc.name, len(got.Bookings), len(got.Accounts), tc.bookings, tc.users)
			}
			if len(got.Bookings) == 1 && (got.Bookings[0].Contact != testContact || got.Bookings[0].Consent.Statement != "ja tack") {
				t.Errorf("%s: booking opens as %+v %+v", tc.name, got.Bookings[0].Contact, got.Bookings[0].Consent)
			}
			if len(got.Accounts) == 1 && (got.Accounts[0].ID != "usr_greta" || got.Accounts[0].Email != "greta@example.se") {
				t.Errorf("%s: account %+v", tc.name, got.Accounts[0])
			}
		}
		if _, err := db.PersonRecords(ctx, " ", ""); err == nil {
			t.Error("no e-mail and no phone: want an error")
		}
	})
}

func TestErasePerson(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		withProvider(t, db, "p1")
		now := t0.Add(24 * time.Hour)
		for _, b := range []bokat.Booking{testBooking("bkg_past", "p1", t0, 60), testBooking("bkg_future", "p1", now.Add(time.Hour), 60)} {
			if err := insert(t, db, b); err != nil {
				t.Fatal(err)
			}
		}
		other := testBooking("bkg_other", "p1", t0.Add(2*time.Hour), 60)
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			c := testContact
			c.Email, c.Phone = "gustav@example.se", "+46709999999"
			if err := tx.InsertBooking(ctx, other, c, bokat.BookingConsent{}, "cal_other", t0); err != nil {
				return err
			}
			if _, err := tx.SignInUser(ctx, "usr_greta", "greta@example.se", t0); err != nil {
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
				CreatedAt: t0})
		})
		if err != nil {
			t.Fatal(err)
		}

		// Without a cancel function, the booking still to come refuses it all.
		_, err = db.ErasePerson(ctx, "greta@example.se", "", now, nil)
		var future *sqlstore.FutureBookingsError
		if !errors.As(err, &future) || len(future.IDs) != 1 || future.IDs[0] != "bkg_future" {
			t.Fatalf("erase with a future booking: %v", err)
		}
		if got, _ := db.PersonRecords(ctx, "greta@example.se", ""); len(got.Bookings) != 2 || len(got.Accounts) != 1 {
			t.Fatalf("a refused erasure changed something: %d bookings, %d accounts", len(got.Bookings), len(got.Accounts))
		}

		var cancelled []string
		out, err := db.ErasePerson(ctx, "greta@example.se", "0701234567", now, func(ctx context.Context, tx *sqlstore.Tx, b bokat.Booking) error {
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
		withProvider(t, db, "p1")
		for _, b := range []bokat.Booking{testBooking("bkg_one", "p1", t0, 60), testBooking("bkg_two", "p1", t0.Add(2*time.Hour), 60)} {
			if err := insert(t, db, b); err != nil {
				t.Fatal(err)
			}
		}
		other := testBooking("bkg_other", "p1", t0.Add(4*time.Hour), 60)
		gustav := testContact
		gustav.Email, gustav.Phone = "gustav@example.se", "+46709999999"
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			if err := tx.InsertBooking(ctx, other, gustav, bokat.BookingConsent{}, "cal_other", t0); err != nil {
				return err
			}
			if err := tx.InsertNotificationJob(ctx, bokat.NotificationJob{ID: "nj_one", BookingID: "bkg_one",
				EventType: "booking.confirmed", Recipient: bokat.RecipientCustomer, Status: bokat.NotificationPending,
				NextAttemptAt: t0, CreatedAt: t0}); err != nil {
				return err
			}
			return tx.InsertFollowUpRequest(ctx, followup.Record{ID: "req_greta", SessionID: "s", OwnerClientID: "pc_1",
				VerticalID: "vvs", JobTypeID: "install_faucet", Status: "ready_to_send", Description: "Kranen",
				CustomerJSON: []byte(`{"first_name":"Greta","last_name":"Gåsfot","phone":"070-123 45 67","email":"greta@example.se"}`),
				LocationJSON: []byte(`{"address":"Drottninggatan 1"}`), TimingJSON: []byte(`{}`), CustomerNextStep: "vänta",
				Source: "test", Locale: "sv-SE", Timezone: "Europe/Stockholm", CreatedAt: t0})
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CorrectPerson(ctx, "greta@example.se", "", sqlstore.ContactCorrection{}); err == nil {
			t.Error("a correction setting nothing: want an error")
		}

		name, email, phone := "Greta Nyberg", "greta.nyberg@example.se", "073-000 11 22"
		out, err := db.CorrectPerson(ctx, " GRETA@example.se", "", sqlstore.ContactCorrection{Name: &name, Email: &email, Phone: &phone})
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
		want := testContact
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
			values, _, _, _ := contactRow(t, db, id)
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
