package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"bokat"
	"bokat/internal/followup"
)

// Sealer seals values at rest with AES-256-GCM under rotating keys: the
// server's --secret-key keyring (*webhook.Keyring), which also seals webhook
// signing secrets. Seal binds a value to context; Open needs the same
// context and the key id Seal returned.
type Sealer interface {
	SealingKeyID() string
	Seal(plaintext []byte, context string) (keyID, sealed string, err error)
	Open(keyID, sealed, context string) ([]byte, error)
}

// Vault seals customer contact data before it is stored and opens it when
// read, and computes the blind index of the customer's e-mail address and
// phone number. Without a vault the store refuses to write contact data.
type Vault struct {
	Keys Sealer
	// Index returns a keyed hash of value in domain (auth.Hasher.Hash); its
	// key must not change while rows indexed with it exist.
	Index func(domain, value string) string
}

// Blind index domains.
const (
	indexEmail = "customer-email"
	indexPhone = "customer-phone"
)

// ErrNoVault is returned when contact data is written or read on a store
// that was opened without a Vault (WithVault).
var ErrNoVault = errors.New("the store has no contact vault: customer contact data cannot be sealed or opened")

func (db *DB) contactVault() (*Vault, error) {
	v := db.vault
	if v == nil || v.Keys == nil || v.Index == nil {
		return nil, ErrNoVault
	}
	return v, nil
}

// NormaliseEmail is the form of an e-mail address the blind index hashes:
// trimmed and lower-case.
func NormaliseEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// NormalisePhone is the form of a phone number the blind index hashes:
// digits only, international with a leading "+"; a Swedish national number
// (leading 0) becomes +46 without the 0, "00" becomes "+". "070-123 45 67",
// "+46 70 123 45 67" and "0046701234567" are one number.
func NormalisePhone(s string) string {
	var b strings.Builder
	plus := false
	for i, r := range strings.TrimSpace(s) {
		switch {
		case r == '+' && i == 0:
			plus = true
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	d := b.String()
	switch {
	case d == "":
		return ""
	case plus:
		return "+" + d
	case strings.HasPrefix(d, "00"):
		return "+" + d[2:]
	case strings.HasPrefix(d, "0"):
		return "+46" + d[1:]
	}
	return "+" + d
}

// EmailIndex returns the blind index of an e-mail address ("" for none).
func (v *Vault) EmailIndex(email string) string {
	if n := NormaliseEmail(email); n != "" {
		return v.Index(indexEmail, n)
	}
	return ""
}

// PhoneIndex returns the blind index of a phone number ("" for none).
func (v *Vault) PhoneIndex(phone string) string {
	if n := NormalisePhone(phone); n != "" {
		return v.Index(indexPhone, n)
	}
	return ""
}

// sealedRow seals the contact columns of one row under the sealing key.
type sealedRow struct {
	v     *Vault
	table string
	id    string
	keyID string
}

func (v *Vault) row(table, id string) *sealedRow {
	return &sealedRow{v: v, table: table, id: id, keyID: v.Keys.SealingKeyID()}
}

// seal returns the sealed form of one column's value; empty stays empty.
func (r *sealedRow) seal(column, plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	keyID, sealed, err := r.v.Keys.Seal([]byte(plain), contactContext(r.table, r.id, column))
	if err != nil {
		return "", fmt.Errorf("seal %s of %s: %w", column, r.id, err)
	}
	if keyID != r.keyID {
		return "", fmt.Errorf("seal %s of %s: the sealing key changed", column, r.id)
	}
	return sealed, nil
}

// openContact returns the plain value of one stored contact column: as
// stored when keyID is empty (a row written before sealing), else opened.
func (v *Vault) openContact(table, id, column, keyID, stored string) (string, error) {
	if keyID == "" || stored == "" {
		return stored, nil
	}
	plain, err := v.Keys.Open(keyID, stored, contactContext(table, id, column))
	if err != nil {
		return "", fmt.Errorf("open %s of %s %s: %w", column, table, id, err)
	}
	return string(plain), nil
}

// contactContext binds a sealed value to its table, row and column: a value
// copied to another place does not open.
func contactContext(table, id, column string) string {
	return "bokat contact\x00" + table + "\x00" + id + "\x00" + column
}

// sealedBookingColumns are the sealed columns of bookings, in the order of
// bookingSecrets' fields.
const sealedBookingColumns = `customer_name, customer_first_name, customer_last_name, customer_phone, customer_email,
	service_address, destination_address, consent_statement, cancel_notes`

var sealedBookingNames = [...]string{"customer_name", "customer_first_name", "customer_last_name", "customer_phone",
	"customer_email", "service_address", "destination_address", "consent_statement", "cancel_notes"}

// bookingSecrets is the plain contact data, consent statement and cancel
// notes (free text that may name a person) of a booking.
type bookingSecrets struct {
	Contact   bokat.BookingContact
	Statement string
	Notes     string
}

func (s *bookingSecrets) fields() [9]*string {
	c := &s.Contact
	return [9]*string{&c.Name, &c.FirstName, &c.LastName, &c.Phone, &c.Email, &c.ServiceAddress, &c.DestinationAddress,
		&s.Statement, &s.Notes}
}

// sealedBooking is a booking's sealed columns as stored.
type sealedBooking struct {
	KeyID      sql.NullString
	Values     [9]string
	EmailIndex string
	PhoneIndex string
}

func (s *sealedBooking) dest() []any {
	out := make([]any, 0, len(s.Values)+1)
	for i := range s.Values {
		out = append(out, &s.Values[i])
	}
	return append(out, &s.KeyID)
}

// sealBooking seals a booking's contact data and statement.
func (v *Vault) sealBooking(id string, plain bookingSecrets) (sealedBooking, error) {
	r := v.row("bookings", id)
	out := sealedBooking{KeyID: sql.NullString{String: r.keyID, Valid: true},
		EmailIndex: v.EmailIndex(plain.Contact.Email), PhoneIndex: v.PhoneIndex(plain.Contact.Phone)}
	for i, f := range plain.fields() {
		sealed, err := r.seal(sealedBookingNames[i], *f)
		if err != nil {
			return sealedBooking{}, err
		}
		out.Values[i] = sealed
	}
	return out, nil
}

// openBooking opens a booking's sealed columns.
func (v *Vault) openBooking(id string, s sealedBooking) (bookingSecrets, error) {
	var plain bookingSecrets
	for i, f := range plain.fields() {
		val, err := v.openContact("bookings", id, sealedBookingNames[i], s.KeyID.String, s.Values[i])
		if err != nil {
			return bookingSecrets{}, err
		}
		*f = val
	}
	return plain, nil
}

// sealedRequestNames are the sealed columns of follow_up_requests.
var sealedRequestNames = [...]string{"customer_json", "location_json", "description", "consent_statement"}

// sealRequest seals a follow-up request's contact columns in r (customer,
// location, description, consent statement) and returns the row's key id
// and blind index, read from the customer JSON's "email" and "phone".
func (v *Vault) sealRequest(r *followup.Record) (keyID, emailIndex, phoneIndex string, err error) {
	var cust struct{ Email, Phone string }
	if len(r.CustomerJSON) > 0 {
		if err := json.Unmarshal(r.CustomerJSON, &cust); err != nil {
			return "", "", "", fmt.Errorf("request %s: customer is not JSON", r.ID)
		}
	}
	row := v.row("follow_up_requests", r.ID)
	plain := [...]string{string(r.CustomerJSON), string(r.LocationJSON), r.Description, r.ConsentStatement}
	var sealed [4]string
	for i, p := range plain {
		if sealed[i], err = row.seal(sealedRequestNames[i], p); err != nil {
			return "", "", "", err
		}
	}
	r.CustomerJSON, r.LocationJSON = []byte(sealed[0]), []byte(sealed[1])
	r.Description, r.ConsentStatement = sealed[2], sealed[3]
	return row.keyID, v.EmailIndex(cust.Email), v.PhoneIndex(cust.Phone), nil
}

// openRequest opens the sealed columns of a request read with key keyID.
func (v *Vault) openRequest(r *followup.Record, keyID string) error {
	fields := [...]*string{new(string), new(string), &r.Description, &r.ConsentStatement}
	*fields[0], *fields[1] = string(r.CustomerJSON), string(r.LocationJSON)
	for i, f := range fields {
		val, err := v.openContact("follow_up_requests", r.ID, sealedRequestNames[i], keyID, *f)
		if err != nil {
			return err
		}
		*f = val
	}
	r.CustomerJSON, r.LocationJSON = []byte(*fields[0]), []byte(*fields[1])
	return nil
}
