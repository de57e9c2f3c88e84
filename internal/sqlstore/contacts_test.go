package sqlstore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"bokat/internal/followup"
	"bokat/internal/privacy"
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

// resealer is the re-sealing use case (package privacy) over db.
func resealer(db *sqlstore.DB) *privacy.Service { return privacy.New(sqlstore.Bind[privacy.Tx](db)) }

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
		values, keyID, emailIndex, phoneIndex := sqlstoretest.ContactRow(t, db, "bkg_sealed")
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
		if n, err := resealer(db).ResealContacts(ctx, new(privacy.ResealCursor), 10); err != nil || n != 1 {
			t.Fatalf("re-seal the legacy row: %d %v, want 1", n, err)
		}
		values, keyID, emailIndex, _ = sqlstoretest.ContactRow(t, db, "bkg_legacy")
		if keyID != webhook.KeyID(oldKey) || values[0] == "Greta Gåsfot" || emailIndex == "" {
			t.Errorf("legacy row after re-sealing: key %q name %q index %q", keyID, values[0], emailIndex)
		}
		if n, err := resealer(db).ResealContacts(ctx, new(privacy.ResealCursor), 10); err != nil || n != 0 {
			t.Errorf("second re-seal: %d %v, want nothing left", n, err)
		}

		// Rotation: the new key seals, the old one still opens, re-sealing
		// moves every row to the new key, after which the old key can go.
		db = sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, newKey, oldKey))
		if n, err := resealer(db).ResealContacts(ctx, new(privacy.ResealCursor), 1); err != nil || n != 1 {
			t.Fatalf("first re-seal batch: %d %v, want 1", n, err)
		}
		if n, err := resealer(db).ResealContacts(ctx, new(privacy.ResealCursor), 10); err != nil || n != 1 {
			t.Fatalf("second re-seal batch: %d %v, want 1", n, err)
		}
		db = sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, newKey))
		for _, id := range []string{"bkg_sealed", "bkg_legacy"} {
			if _, keyID, newIndex, _ := sqlstoretest.ContactRow(t, db, id); keyID != webhook.KeyID(newKey) || newIndex != emailIndex {
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
		n, err := resealer(db).ResealContacts(ctx, new(privacy.ResealCursor), 10)
		if n != 1 || !errors.Is(err, webhook.ErrUnknownKey) || !strings.Contains(err.Error(), "bkg_sealed") ||
			strings.Contains(err.Error(), "Greta") {
			t.Errorf("re-seal beside unopenable rows: %d, %v; want 1 and an error naming bkg_sealed", n, err)
		}
		if nb, err := db.NotificationBooking(ctx, "bkg_later"); err != nil || nb.Contact != testContact {
			t.Errorf("the openable row after re-sealing: %+v %v", nb.Contact, err)
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
