package privacy

import (
	"context"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/followup"
)

// Store is what the privacy use cases need of the database outside a
// transaction. A person is named by an e-mail address and/or a phone number
// in any spelling: the store finds their rows by the blind index of the
// normalised address and number (so rows written before sealing count only
// once re-sealed), and fails, with an error saying so, when neither
// normalises to anything. Every method fails with the store's ErrNoVault
// when it was opened without the keys that seal contact data.
type Store interface {
	// InTx runs fn in one write transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(Tx) error) error
	// PersonRecords returns what is held for the person: their bookings
	// and follow-up requests, contact data and consent opened, and the
	// sign-in account of their e-mail address.
	PersonRecords(ctx context.Context, email, phone string) (Records, error)
	// ExpiredContacts returns, in id order, the ids of up to limit bookings
	// still holding contact data whose slot ended (confirmed) or that were
	// cancelled before bookingsBefore, and of up to limit follow-up
	// requests still holding it that were created before requestsBefore.
	ExpiredContacts(ctx context.Context, bookingsBefore, requestsBefore time.Time, limit int) (bookings, requests []string, err error)
	// ContactsToReseal returns, in id order, the ids after after of up to
	// limit rows of the table whose contact data is held (not erased) and
	// is in plain text (written before sealing) or sealed with a key other
	// than the sealing key.
	ContactsToReseal(ctx context.Context, t Table, after string, limit int) ([]string, error)
	// DeleteExpiredIdempotencyKeys deletes, in one transaction, up to
	// limit idempotency keys whose expiry is at or before now, and returns
	// how many it deleted.
	DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time, limit int) (int, error)
	// EraseExpiredInvitationAddresses erases, in one transaction, the
	// e-mail address of up to limit provider invitations that expired at
	// or before now unanswered (the rows stay), and returns how many it
	// erased.
	EraseExpiredInvitationAddresses(ctx context.Context, now time.Time, limit int) (int, error)
	// DeleteOperatorAuditBefore deletes, in one transaction, up to limit
	// operator audit rows written before the instant, and returns how many
	// it deleted.
	DeleteOperatorAuditBefore(ctx context.Context, before time.Time, limit int) (int, error)
}

// Tx is a write transaction as the privacy use cases use it. It is a
// booking transaction too: an erasure cancels a booking still to come as
// the lifecycle does, with its event and notifications, in the erasure's
// transaction.
type Tx interface {
	booking.Tx
	// PersonBookings returns, in id order, the person's bookings (found as
	// Store.PersonRecords finds them), each held against concurrent
	// writers until the transaction ends.
	PersonBookings(ctx context.Context, email, phone string, now time.Time) ([]Row, error)
	// PersonRequests is PersonBookings for follow-up requests (never
	// Upcoming).
	PersonRequests(ctx context.Context, email, phone string) ([]Row, error)
	// EraseBookingContact empties the contact data of a booking that still
	// holds it (and, when endedBefore is not zero, whose slot ended
	// (confirmed) or that was cancelled before endedBefore), recording now
	// as the erasure, and skips its unsent notification jobs. It reports
	// whether it erased the booking and how many jobs it skipped.
	EraseBookingContact(ctx context.Context, id string, now, endedBefore time.Time) (erased bool, dropped int, err error)
	// EraseRequestContact is EraseBookingContact for a follow-up request
	// (created before createdBefore, when not zero): customer and location
	// become {}, description, details and consent statement empty.
	EraseRequestContact(ctx context.Context, id string, now, createdBefore time.Time) (erased bool, dropped int, err error)
	// DeleteAccount deletes the sign-in account of an e-mail address in any
	// spelling with everything hanging off it (sessions, grants, tokens),
	// and the sign-in codes sent to it. It returns the deleted user ids;
	// an empty address deletes nothing.
	DeleteAccount(ctx context.Context, email string) ([]string, error)
	// RewriteBookingContact opens a booking's contact data, applies edit,
	// and writes it back sealed with the sealing key, blind index
	// recomputed. It reports false when the row changed in between. A row
	// that does not open fails with *UnopenableError.
	RewriteBookingContact(ctx context.Context, id string, edit func(*bokat.BookingContact)) (bool, error)
	// RewriteRequestContact is RewriteBookingContact for a follow-up
	// request; edit gets the request with its sealed columns opened, and
	// its error fails the rewrite.
	RewriteRequestContact(ctx context.Context, id string, edit func(*followup.Record) error) (bool, error)
	// ResealBooking seals a booking's contact data with the sealing key and
	// fills its blind index, unless it is sealed with that key already. It
	// reports whether it wrote the row (false too when somebody re-sealed
	// it in between). A row that does not open fails with *UnopenableError.
	ResealBooking(ctx context.Context, id string) (bool, error)
	// ResealRequest is ResealBooking for a follow-up request.
	ResealRequest(ctx context.Context, id string) (bool, error)
}

// Table names a table whose rows hold customer contact data.
type Table int

// The tables holding customer contact data, in the order a re-sealing pass
// visits them.
const (
	Bookings Table = iota
	Requests
)

func (t Table) String() string {
	if t == Bookings {
		return "bookings"
	}
	return "follow_up_requests"
}

// Row is a booking or follow-up request of a person, as a transaction
// finds it.
type Row struct {
	ID string
	// Upcoming reports a confirmed booking whose slot has not ended.
	Upcoming bool
	// Erased reports that its contact data was erased.
	Erased bool
}

// UnopenableError is a row whose sealed values do not open: sealed with a
// key no longer given, or altered. Err is the sealer's error, which names
// key and row ids only.
type UnopenableError struct{ Err error }

func (u *UnopenableError) Error() string { return u.Err.Error() }
func (u *UnopenableError) Unwrap() error { return u.Err }

// Booking is a booking held for a person, with its contact data and consent
// opened.
type Booking struct {
	bokat.Booking
	Contact         bokat.BookingContact
	Consent         bokat.BookingConsent
	CancelNotes     string
	ContactErasedAt time.Time // zero while the contact data is held
	// ChangeConsentMethod is how consent to the latest cancellation or
	// reschedule was obtained; empty when there was none.
	ChangeConsentMethod bokat.ConsentMethod
}

// Account is a sign-in account (OAuth user) of a person.
type Account struct {
	ID           string
	Email        string
	CreatedAt    time.Time
	LastSignInAt time.Time
}

// Records is everything held for one person: the bookings and follow-up
// requests whose customer e-mail address or phone number is theirs, and the
// sign-in account of their e-mail address.
type Records struct {
	Bookings []Booking
	Requests []followup.Record
	Accounts []Account
}
