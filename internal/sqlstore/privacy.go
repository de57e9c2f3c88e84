package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"bokat"
)

// PersonBooking is a booking held for a person, with its contact data and
// consent opened.
type PersonBooking struct {
	bokat.Booking
	Contact         bokat.BookingContact
	Consent         bokat.BookingConsent
	CancelNotes     string
	ContactErasedAt time.Time // zero while the contact data is held
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
	Requests []FollowUpRequest
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
		consent_source, consent_collected_at, cancel_notes, contact_erased_at
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
		b, err := scanBooking(rows, append(s.dest(), &pb.Consent.Source, &collected, &pb.CancelNotes, &erasedAt)...)
		if err != nil {
			return PersonRecords{}, err
		}
		plain, err := v.openBooking(b.ID, s)
		if err != nil {
			return PersonRecords{}, err
		}
		pb.Booking, pb.Contact, pb.Consent.Statement = b, plain.Contact, plain.Statement
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
