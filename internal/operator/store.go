package operator

import (
	"context"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/provider"
	"bokat/internal/web"
)

// Store is what the operator console needs of the database outside a
// transaction. Lookups that find nothing return bokat.ErrNotFound.
type Store interface {
	// InTx runs fn in one write transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(Tx) error) error
	// OperatorSession returns the active operator of an unexpired session
	// stored under the token's keyed hash.
	OperatorSession(ctx context.Context, tokenHash string, now time.Time) (Operator, error)
	// DeleteOperatorSession ends a session; an unknown one is no error.
	DeleteOperatorSession(ctx context.Context, tokenHash string) error
	// OperatorExists reports whether the (normalised) address has an
	// active operator account.
	OperatorExists(ctx context.Context, email string) (bool, error)
	// OperatorAudit returns the latest audit entries, newest first, of the
	// object (kind, id), or of all when kind is "".
	ConsoleAudit(ctx context.Context, kind, id string, limit int) ([]AuditEntry, error)

	// FindBookings returns at most f.Limit bookings matching every set
	// field of f, latest slot first. A customer e-mail is matched by its
	// blind index only.
	FindBookings(ctx context.Context, f BookingFilter) ([]Booking, error)
	// OperatorBooking returns a booking by id with its acknowledgement.
	OperatorBooking(ctx context.Context, id string) (Booking, error)
	// TestClocks reads a test booking's owner's clock: the console acts on
	// a test booking at its owner's now, as the owner's own calls do.
	bokat.TestClocks
	// BookingStory returns what happened to a booking: its events, its
	// messages (notification jobs) and its webhook deliveries.
	BookingStory(ctx context.Context, id string) (Story, error)
	// BookingAddresses returns the service and destination addresses of a
	// booking (the other contact fields empty).
	BookingAddresses(ctx context.Context, id string) (bokat.BookingContact, error)

	// ProviderHealth returns the providers q.ProviderIDs names (an unknown
	// id is left out), by name, each with its status, its people and open
	// invitations at q.Now, its messages that failed since
	// q.FailuresSince, and its calendar subscriptions (stale when failing
	// since q.StaleBefore or earlier). It reads those providers' rows only.
	ProviderHealth(ctx context.Context, q HealthQuery) ([]ProviderHealth, error)
	// ProviderBriefs returns every provider's brief, by name and id, its
	// message failures counted since failuresSince.
	ProviderBriefs(ctx context.Context, failuresSince time.Time) ([]ProviderBrief, error)
	// FollowUps returns at most limit follow-up requests, newest first
	// (only those with no candidate provider when uncovered), each with
	// its candidates.
	FollowUps(ctx context.Context, uncovered bool, limit int) ([]FollowUp, error)
	// FailingEndpoints returns the webhook endpoints (not deleted) that
	// are disabled, or with a delivery failed since the instant or pending
	// after a failed attempt.
	FailingEndpoints(ctx context.Context, since time.Time) ([]Endpoint, error)
	// Credentials returns the partner credentials, then the OAuth
	// clients, each newest first.
	Credentials(ctx context.Context) ([]Credential, error)
}

// Tx is a write transaction as the operator console uses it. Sign-in codes
// are the web layer's (web.CodeTx); a booking's changes are written by the
// booking lifecycle's use cases (booking.Tx) inside it.
type Tx interface {
	web.CodeTx
	booking.Tx
	// provider.Tx: an invitation the operator makes is the provider
	// side's, written with its own audit row.
	provider.Tx
	AuditTx
	// ActiveOperatorByEmail returns the active account of the
	// (normalised) address.
	ActiveOperatorByEmail(ctx context.Context, email string) (Operator, error)
	// InsertOperator stores a new account, its address sealed; an address
	// with an active account fails with bokat.ErrConflict.
	InsertOperator(ctx context.Context, o Operator) error
	// RecordOperatorSignIn records an operator's sign-in.
	RecordOperatorSignIn(ctx context.Context, id string, now time.Time) error
	InsertOperatorSession(ctx context.Context, tokenHash, operatorID string, created, expires time.Time) error
	// FollowUpExists reports whether a follow-up request exists.
	FollowUpExists(ctx context.Context, id string) (bool, error)
	// OperatorBookingForUpdate returns a booking, held until the
	// transaction ends.
	OperatorBookingForUpdate(ctx context.Context, id string) (bokat.Booking, error)
	// SetProviderPause stores a provider's pause (zero: none), as the
	// provider's own pause does; bokat.ErrNotFound for an unknown one.
	SetProviderPause(ctx context.Context, providerID string, until, now time.Time) error
}
