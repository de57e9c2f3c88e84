package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"bokat"
	"bokat/internal/followup"
)

// PersonBooking is a booking held for a person, with its contact data and
// consent opened.
type PersonBooking struct {
	bokat.Booking
	Contact         bokat.BookingContact
	Consent         bokat.BookingConsent
	CancelNotes     string
	ContactErasedAt time.Time // zero while the contact data is held
	// ChangeConsentMethod is how consent to the latest cancellation or
	// reschedule was obtained; empty when there was none.
	ChangeConsentMethod bokat.ConsentMethod
}

// PersonAccount is a sign-in account (OAuth user) of a person.
type PersonAccount struct {
	ID           string
	Email        string
	CreatedAt    time.Time
	LastSignInAt time.Time
}

// PersonRecords is everything held for one person: the bookings and
// follow-up requests whose customer e-mail address or phone number is
// theirs (found by the blind index, so rows written before sealing count
// only once re-sealed), and the sign-in account of their e-mail address.
type PersonRecords struct {
	Bookings []PersonBooking
	Requests []followup.Record
	Accounts []PersonAccount
}

// PersonRecords returns what is held for the person with the e-mail address
// and/or phone number (either may be empty, not both).
func (db *DB) PersonRecords(ctx context.Context, email, phone string) (PersonRecords, error) {
	v, err := db.contactVault()
	if err != nil {
		return PersonRecords{}, err
	}
	emailIndex, phoneIndex := v.EmailIndex(email), v.PhoneIndex(phone)
	if emailIndex == "" && phoneIndex == "" {
		return PersonRecords{}, fmt.Errorf("person records: an e-mail address or a phone number is required")
	}
	// '' never matches: an empty index means "not given" or "none stored".
	match := `((customer_email_index = $1 AND $1 <> '') OR (customer_phone_index = $2 AND $2 <> ''))`
	var out PersonRecords
	rows, err := db.read.QueryContext(ctx, `SELECT `+bookingColumns+`, `+sealedBookingColumns+`, contact_key_id,
		consent_source, consent_collected_at, contact_erased_at, consent_method, change_consent_method
		FROM bookings WHERE `+match+` ORDER BY confirmed_at, id`, emailIndex, phoneIndex)
	if err != nil {
		return PersonRecords{}, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			s                   sealedBooking
			pb                  PersonBooking
			collected, erasedAt sql.NullInt64
		)
		b, err := scanBooking(rows, append(s.dest(), &pb.Consent.Source, &collected, &erasedAt, &pb.Consent.Method, &pb.ChangeConsentMethod)...)
		if err != nil {
			return PersonRecords{}, err
		}
		plain, err := v.openBooking(b.ID, s)
		if err != nil {
			return PersonRecords{}, err
		}
		pb.Booking, pb.Contact, pb.Consent.Statement, pb.CancelNotes = b, plain.Contact, plain.Statement, plain.Notes
		pb.Consent.CollectedAt, pb.ContactErasedAt = FromNullMillis(collected), FromNullMillis(erasedAt)
		out.Bookings = append(out.Bookings, pb)
	}
	if err := rows.Err(); err != nil {
		return PersonRecords{}, translate(err)
	}
	ids, err := db.ids(ctx, `SELECT id FROM follow_up_requests WHERE `+match+` ORDER BY created_at, id`, emailIndex, phoneIndex)
	if err != nil {
		return PersonRecords{}, err
	}
	for _, id := range ids {
		r, err := db.FollowUpRequest(ctx, id)
		if err != nil {
			return PersonRecords{}, err
		}
		out.Requests = append(out.Requests, r)
	}
	if n := NormaliseEmail(email); n != "" {
		var (
			a        PersonAccount
			created  int64
			lastSeen sql.NullInt64
		)
		err := db.read.QueryRowContext(ctx, `SELECT id, email, created_at, last_sign_in_at FROM users WHERE email = $1`, n).
			Scan(&a.ID, &a.Email, &created, &lastSeen)
		switch err = translate(err); {
		case err == nil:
			a.CreatedAt, a.LastSignInAt = FromMillis(created), FromNullMillis(lastSeen)
			out.Accounts = append(out.Accounts, a)
		case !isNotFound(err):
			return PersonRecords{}, err
		}
	}
	return out, nil
}

// FutureBookingsError refuses an erasure: the person has confirmed bookings
// whose slot has not ended, and the caller did not ask to cancel them.
type FutureBookingsError struct{ IDs []string }

func (e *FutureBookingsError) Error() string {
	return fmt.Sprintf("the person has %d confirmed booking(s) still to come (%s): cancel them first or erase with --cancel-future",
		len(e.IDs), strings.Join(e.IDs, ", "))
}

// PersonErasure is what an erasure on request touched: ids and counts only.
type PersonErasure struct {
	Erased
	// Cancelled are the future bookings cancelled before the erasure.
	Cancelled []string
	// Accounts are the ids of the deleted sign-in accounts.
	Accounts []string
}

// ErasePerson erases, in one transaction at now, everything held for the
// person with the e-mail address and/or phone number (found as
// PersonRecords finds it): the contact data of their bookings and
// follow-up requests (as retention does, unsent notification jobs
// dropped) and their sign-in account (user, sessions, grants, tokens,
// sign-in codes). A confirmed booking whose slot has not ended makes it
// fail with *FutureBookingsError unless cancel is given; then each such
// booking is erased and then handed to cancel inside the transaction (which
// must cancel it with its event and notifications: the customer's message
// then finds no address and is skipped, the provider's goes out).
func (db *DB) ErasePerson(ctx context.Context, email, phone string, now time.Time,
	cancel func(ctx context.Context, tx *Tx, b bokat.Booking) error) (PersonErasure, error) {
	v, err := db.contactVault()
	if err != nil {
		return PersonErasure{}, err
	}
	emailIndex, phoneIndex := v.EmailIndex(email), v.PhoneIndex(phone)
	if emailIndex == "" && phoneIndex == "" {
		return PersonErasure{}, fmt.Errorf("erase: an e-mail address or a phone number is required")
	}
	match := `((customer_email_index = $1 AND $1 <> '') OR (customer_phone_index = $2 AND $2 <> ''))`
	lock := ""
	if db.engine == Postgres {
		lock = " FOR UPDATE"
	}
	var out PersonErasure
	err = db.InTx(ctx, func(tx *Tx) error {
		out = PersonErasure{}
		type found struct {
			id     string
			future bool
		}
		var bookings []found
		rows, err := tx.tx.QueryContext(ctx, `SELECT id, status = 'confirmed' AND slot_end_at > $3 FROM bookings WHERE `+match+
			` ORDER BY id`+lock, emailIndex, phoneIndex, Millis(now))
		if err != nil {
			return translate(err)
		}
		var future []string
		for rows.Next() {
			var f found
			if err := rows.Scan(&f.id, &f.future); err != nil {
				rows.Close()
				return translate(err)
			}
			bookings = append(bookings, f)
			if f.future {
				future = append(future, f.id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate(err)
		}
		if len(future) > 0 && cancel == nil {
			return &FutureBookingsError{IDs: future}
		}
		for _, f := range bookings {
			ok, dropped, err := tx.eraseBooking(ctx, f.id, now, "")
			if err != nil {
				return err
			}
			if ok {
				out.Bookings = append(out.Bookings, f.id)
				out.DroppedNotifications += dropped
			}
		}
		for _, id := range future {
			b, err := tx.BookingByID(ctx, id)
			if err != nil {
				return err
			}
			if err := cancel(ctx, tx, b); err != nil {
				return fmt.Errorf("cancel booking %s: %w", id, err)
			}
			out.Cancelled = append(out.Cancelled, id)
		}
		var requests []string
		rows, err = tx.tx.QueryContext(ctx, `SELECT id FROM follow_up_requests WHERE `+match+` ORDER BY id`+lock,
			emailIndex, phoneIndex)
		if err != nil {
			return translate(err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return translate(err)
			}
			requests = append(requests, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate(err)
		}
		for _, id := range requests {
			ok, dropped, err := tx.eraseRequest(ctx, id, now, "")
			if err != nil {
				return err
			}
			if ok {
				out.Requests = append(out.Requests, id)
				out.DroppedNotifications += dropped
			}
		}
		if n := NormaliseEmail(email); n != "" {
			accounts, err := tx.eraseAccount(ctx, n)
			if err != nil {
				return err
			}
			out.Accounts = accounts
		}
		return nil
	})
	if err != nil {
		return PersonErasure{}, fmt.Errorf("erase: %w", err)
	}
	return out, nil
}

// eraseAccount deletes the sign-in account of a normalised e-mail address
// and everything hanging off it, and the sign-in codes sent to it. It
// returns the deleted user ids.
func (tx *Tx) eraseAccount(ctx context.Context, email string) ([]string, error) {
	var ids []string
	rows, err := tx.tx.QueryContext(ctx, `SELECT id FROM users WHERE email = $1`, email)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	for _, id := range ids {
		for _, q := range []string{
			`DELETE FROM oauth_tokens WHERE grant_id IN (SELECT id FROM oauth_grants WHERE user_id = $1)`,
			`DELETE FROM oauth_grants WHERE user_id = $1`,
			`DELETE FROM oauth_sessions WHERE user_id = $1`,
			`DELETE FROM users WHERE id = $1`,
		} {
			if _, err := tx.tx.ExecContext(ctx, q, id); err != nil {
				return nil, translate(err)
			}
		}
	}
	if _, err := tx.tx.ExecContext(ctx, `DELETE FROM oauth_signin_codes WHERE email = $1`, email); err != nil {
		return nil, translate(err)
	}
	return ids, nil
}

// ContactCorrection is a correction of a person's contact data; a nil field
// is left as it is. A name correction replaces the whole name: when any of
// Name, FirstName and LastName is set, those not set are emptied, so no
// part of the old name survives beside the new one.
type ContactCorrection struct {
	Name, FirstName, LastName *string
	Phone, Email              *string
}

// Fields names the fields the correction sets (customer field names, no
// values), in a fixed order.
func (c ContactCorrection) Fields() []string {
	var out []string
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", c.Name}, {"first_name", c.FirstName}, {"last_name", c.LastName}, {"phone", c.Phone}, {"email", c.Email}} {
		if f.v != nil {
			out = append(out, f.name)
		}
	}
	return out
}

func (c ContactCorrection) renames() bool {
	return c.Name != nil || c.FirstName != nil || c.LastName != nil
}

func valueOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// apply corrects a booking's contact data.
func (c ContactCorrection) apply(b *bokat.BookingContact) {
	if c.renames() {
		b.Name, b.FirstName, b.LastName = valueOf(c.Name), valueOf(c.FirstName), valueOf(c.LastName)
	}
	if c.Phone != nil {
		b.Phone = *c.Phone
	}
	if c.Email != nil {
		b.Email = *c.Email
	}
}

// applyJSON corrects a follow-up request's customer JSON object, keeping
// any other member.
func (c ContactCorrection) applyJSON(customer []byte) ([]byte, error) {
	m := map[string]any{}
	if len(customer) > 0 {
		if err := json.Unmarshal(customer, &m); err != nil {
			return nil, errors.New("the customer is not a JSON object")
		}
	}
	set := func(key string, p *string) {
		if p != nil && *p != "" {
			m[key] = *p
		} else {
			delete(m, key)
		}
	}
	if c.renames() {
		set("name", c.Name)
		set("first_name", c.FirstName)
		set("last_name", c.LastName)
	}
	if c.Phone != nil {
		m["phone"] = *c.Phone
	}
	if c.Email != nil {
		m["email"] = *c.Email
	}
	return json.Marshal(m)
}

// PersonCorrection is what a correction touched: ids only.
type PersonCorrection struct {
	Bookings []string
	Requests []string
}

// CorrectPerson corrects, in one transaction, the customer contact data of
// every booking and follow-up request of the person with the e-mail address
// and/or phone number (found as PersonRecords finds them; rows whose
// contact data was erased hold none to correct). Each row is re-sealed with
// the sealing key and its blind index recomputed, so the person is found by
// the corrected address and number afterwards, and no longer by the old
// ones. Pending notification jobs read the booking or request when they
// send, so unsent messages go to the corrected address. A row that does not
// open (sealed with a key no longer given) fails the whole correction,
// naming the row. A correction that sets nothing is an error.
func (db *DB) CorrectPerson(ctx context.Context, email, phone string, c ContactCorrection) (PersonCorrection, error) {
	v, err := db.contactVault()
	if err != nil {
		return PersonCorrection{}, err
	}
	if len(c.Fields()) == 0 {
		return PersonCorrection{}, errors.New("correct: nothing to correct")
	}
	emailIndex, phoneIndex := v.EmailIndex(email), v.PhoneIndex(phone)
	if emailIndex == "" && phoneIndex == "" {
		return PersonCorrection{}, fmt.Errorf("correct: an e-mail address or a phone number is required")
	}
	match := `((customer_email_index = $1 AND $1 <> '') OR (customer_phone_index = $2 AND $2 <> ''))
		AND contact_erased_at IS NULL`
	lock := ""
	if db.engine == Postgres {
		lock = " FOR UPDATE"
	}
	var out PersonCorrection
	err = db.InTx(ctx, func(tx *Tx) error {
		out = PersonCorrection{}
		bookings, err := tx.ids(ctx, `SELECT id FROM bookings WHERE `+match+` ORDER BY id`+lock, emailIndex, phoneIndex)
		if err != nil {
			return err
		}
		requests, err := tx.ids(ctx, `SELECT id FROM follow_up_requests WHERE `+match+` ORDER BY id`+lock, emailIndex, phoneIndex)
		if err != nil {
			return err
		}
		for _, id := range bookings {
			n, err := tx.rewriteBooking(ctx, v, id, func(s *bookingSecrets) { c.apply(&s.Contact) })
			if err != nil {
				return fmt.Errorf("booking %s: %w", id, err)
			}
			if n != 1 {
				return fmt.Errorf("booking %s changed during the correction", id)
			}
			out.Bookings = append(out.Bookings, id)
		}
		for _, id := range requests {
			n, err := tx.rewriteRequest(ctx, v, id, func(r *followup.Record) error {
				customer, err := c.applyJSON(r.CustomerJSON)
				r.CustomerJSON = customer
				return err
			})
			if err != nil {
				return fmt.Errorf("follow-up request %s: %w", id, err)
			}
			if n != 1 {
				return fmt.Errorf("follow-up request %s changed during the correction", id)
			}
			out.Requests = append(out.Requests, id)
		}
		return nil
	})
	if err != nil {
		return PersonCorrection{}, fmt.Errorf("correct: %w", err)
	}
	return out, nil
}

// ids runs a query returning one id column inside the transaction.
func (tx *Tx) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	return scanIDs(tx.tx.QueryContext(ctx, query, args...))
}
