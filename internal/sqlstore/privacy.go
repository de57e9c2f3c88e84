package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"bokat"
	"bokat/internal/followup"
	"bokat/internal/privacy"
)

var (
	_ privacy.Tx    = (*Tx)(nil)
	_ privacy.Store = Bound[privacy.Tx]{}
)

// personMatch is the condition, over the blind index columns of bookings
// and follow_up_requests ($1 the e-mail index, $2 the phone index), that
// finds a person's rows; ” never matches: an empty index means "not
// given" or "none stored".
const personMatch = `((customer_email_index = $1 AND $1 <> '') OR (customer_phone_index = $2 AND $2 <> ''))`

// personIndex returns the blind index of the person's e-mail address and
// phone number, at least one of them not empty.
func (db *DB) personIndex(email, phone string) (v *Vault, emailIndex, phoneIndex string, err error) {
	if v, err = db.contactVault(); err != nil {
		return nil, "", "", err
	}
	emailIndex, phoneIndex = v.EmailIndex(email), v.PhoneIndex(phone)
	if emailIndex == "" && phoneIndex == "" {
		return nil, "", "", errors.New("an e-mail address or a phone number is required")
	}
	return v, emailIndex, phoneIndex, nil
}

// PersonRecords implements privacy.Store.
func (db *DB) PersonRecords(ctx context.Context, email, phone string) (privacy.Records, error) {
	v, emailIndex, phoneIndex, err := db.personIndex(email, phone)
	if err != nil {
		return privacy.Records{}, fmt.Errorf("person records: %w", err)
	}
	var out privacy.Records
	rows, err := db.read.QueryContext(ctx, `SELECT `+bookingColumns+`, `+sealedBookingColumns+`, contact_key_id,
		consent_source, consent_collected_at, contact_erased_at, consent_method, change_consent_method
		FROM bookings WHERE `+personMatch+` ORDER BY confirmed_at, id`, emailIndex, phoneIndex)
	if err != nil {
		return privacy.Records{}, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			s                   sealedBooking
			pb                  privacy.Booking
			collected, erasedAt sql.NullInt64
		)
		b, err := scanBooking(rows, append(s.dest(), &pb.Consent.Source, &collected, &erasedAt, &pb.Consent.Method, &pb.ChangeConsentMethod)...)
		if err != nil {
			return privacy.Records{}, err
		}
		plain, err := v.openBooking(b.ID, s)
		if err != nil {
			return privacy.Records{}, err
		}
		pb.Booking, pb.Contact, pb.Consent.Statement, pb.CancelNotes = b, plain.Contact, plain.Statement, plain.Notes
		pb.Consent.CollectedAt, pb.ContactErasedAt = FromNullMillis(collected), FromNullMillis(erasedAt)
		out.Bookings = append(out.Bookings, pb)
	}
	if err := rows.Err(); err != nil {
		return privacy.Records{}, translate(err)
	}
	ids, err := db.ids(ctx, `SELECT id FROM follow_up_requests WHERE `+personMatch+` ORDER BY created_at, id`, emailIndex, phoneIndex)
	if err != nil {
		return privacy.Records{}, err
	}
	for _, id := range ids {
		r, err := db.FollowUpRequest(ctx, id)
		if err != nil {
			return privacy.Records{}, err
		}
		out.Requests = append(out.Requests, r)
	}
	if n := NormaliseEmail(email); n != "" {
		var (
			a        privacy.Account
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
			return privacy.Records{}, err
		}
	}
	return out, nil
}

// forUpdate is the locking clause that holds selected rows until the
// transaction ends: PostgreSQL's; SQLite's one writer holds them anyway.
func (tx *Tx) forUpdate() string {
	if tx.engine == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// PersonBookings implements privacy.Tx.
func (tx *Tx) PersonBookings(ctx context.Context, email, phone string, now time.Time) ([]privacy.Row, error) {
	_, emailIndex, phoneIndex, err := tx.db.personIndex(email, phone)
	if err != nil {
		return nil, err
	}
	return tx.personRows(ctx, `SELECT id, status = 'confirmed' AND slot_end_at > $3, contact_erased_at IS NOT NULL
		FROM bookings WHERE `+personMatch+` ORDER BY id`+tx.forUpdate(), emailIndex, phoneIndex, Millis(now))
}

// PersonRequests implements privacy.Tx.
func (tx *Tx) PersonRequests(ctx context.Context, email, phone string) ([]privacy.Row, error) {
	_, emailIndex, phoneIndex, err := tx.db.personIndex(email, phone)
	if err != nil {
		return nil, err
	}
	return tx.personRows(ctx, `SELECT id, false, contact_erased_at IS NOT NULL
		FROM follow_up_requests WHERE `+personMatch+` ORDER BY id`+tx.forUpdate(), emailIndex, phoneIndex)
}

// personRows reads the rows of a query returning id, upcoming and erased.
func (tx *Tx) personRows(ctx context.Context, query string, args ...any) ([]privacy.Row, error) {
	rows, err := tx.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []privacy.Row
	for rows.Next() {
		var r privacy.Row
		if err := rows.Scan(&r.ID, &r.Upcoming, &r.Erased); err != nil {
			return nil, translate(err)
		}
		out = append(out, r)
	}
	return out, translate(rows.Err())
}

// DeleteAccount implements privacy.Tx.
func (tx *Tx) DeleteAccount(ctx context.Context, email string) ([]string, error) {
	email = NormaliseEmail(email)
	if email == "" {
		return nil, nil
	}
	ids, err := tx.ids(ctx, `SELECT id FROM users WHERE email = $1`, email)
	if err != nil {
		return nil, err
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

// RewriteBookingContact implements privacy.Tx.
func (tx *Tx) RewriteBookingContact(ctx context.Context, id string, edit func(*bokat.BookingContact)) (bool, error) {
	v, err := tx.db.contactVault()
	if err != nil {
		return false, err
	}
	n, err := tx.rewriteBooking(ctx, v, id, func(s *bookingSecrets) { edit(&s.Contact) })
	return n == 1, err
}

// RewriteRequestContact implements privacy.Tx.
func (tx *Tx) RewriteRequestContact(ctx context.Context, id string, edit func(*followup.Record) error) (bool, error) {
	v, err := tx.db.contactVault()
	if err != nil {
		return false, err
	}
	n, err := tx.rewriteRequest(ctx, v, id, edit)
	return n == 1, err
}

// ids runs a query returning one id column inside the transaction.
func (tx *Tx) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	return scanIDs(tx.tx.QueryContext(ctx, query, args...))
}
