package provider

import (
	"context"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/web"
)

// Store is what the provider side needs of the database outside a
// transaction. Lookups that find nothing return bokat.ErrNotFound.
type Store interface {
	// InTx runs fn in one write transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(Tx) error) error
	// ProviderSessionUser returns the active (not removed) user of an
	// unexpired session stored under the token's keyed hash.
	ProviderSessionUser(ctx context.Context, tokenHash string, now time.Time) (User, error)
	// DeleteProviderSession ends a session; an unknown one is no error.
	DeleteProviderSession(ctx context.Context, tokenHash string) error
	// ProviderAccountExists reports whether the (normalised) address has an
	// active account or an invitation still open at now.
	ProviderAccountExists(ctx context.Context, email string, now time.Time) (bool, error)
	// ProviderName returns the name of a provider.
	ProviderName(ctx context.Context, providerID string) (string, error)
	// ProviderBookingList returns at most limit bookings of the provider
	// (confirmed and cancelled): upcoming ones (slot ending after now) by
	// slot start, or, when past, the others latest first; with after, only
	// those that come after that booking in the same order (a booking of
	// another provider or none is bokat.ErrNotFound).
	ProviderBookingList(ctx context.Context, providerID string, now time.Time, past bool, after string, limit int) ([]Booking, error)
	// ProviderUsers returns the provider's active users by creation, with
	// their addresses opened.
	ProviderUsers(ctx context.Context, providerID string) ([]User, error)
	// OpenInvitations returns the provider's invitations neither accepted,
	// withdrawn nor expired at now.
	OpenInvitations(ctx context.Context, providerID string, now time.Time) ([]Invitation, error)
	// ProviderAudit returns the provider's latest audit entries, newest
	// first, at most limit.
	ProviderAudit(ctx context.Context, providerID string, limit int) ([]AuditEntry, error)
}

// Tx is a write transaction as the provider side uses it. Sign-in codes
// are the web layer's (web.CodeTx); a booking's events are written by the
// booking lifecycle's use cases (booking.Tx) inside it.
type Tx interface {
	web.CodeTx
	booking.Tx
	// ActiveProviderUserByEmail returns the active account of the
	// (normalised) address.
	ActiveProviderUserByEmail(ctx context.Context, email string) (User, error)
	// OpenInvitationByEmail returns the latest invitation of the address
	// still open at now.
	OpenInvitationByEmail(ctx context.Context, email string, now time.Time) (Invitation, error)
	// InsertProviderUser stores a new account; an address with an active
	// account already fails with an error wrapping bokat.ErrConflict.
	InsertProviderUser(ctx context.Context, u User) error
	// CloseInvitation marks an open invitation of the provider accepted
	// (accepted true) or withdrawn; bokat.ErrNotFound when the provider has
	// no such open invitation.
	CloseInvitation(ctx context.Context, providerID, id string, accepted bool, now time.Time) error
	InsertInvitation(ctx context.Context, inv Invitation) error
	// RecordProviderSignIn records a user's sign-in.
	RecordProviderSignIn(ctx context.Context, userID string, now time.Time) error
	InsertProviderSession(ctx context.Context, tokenHash, userID string, created, expires time.Time) error
	// ProviderUserForUpdate returns an active user of the provider, held
	// until the transaction ends; another provider's user is not found.
	ProviderUserForUpdate(ctx context.Context, providerID, userID string) (User, error)
	// RemoveProviderUser marks the user removed and ends their sessions.
	RemoveProviderUser(ctx context.Context, userID string, now time.Time) error
	// InsertProviderAudit records one write.
	InsertProviderAudit(ctx context.Context, e AuditEntry) error
	// ProviderBookingForUpdate returns a booking of the provider, held
	// until the transaction ends; another provider's booking is not found.
	ProviderBookingForUpdate(ctx context.Context, providerID, bookingID string) (Booking, error)
	// BookingContact opens the customer's contact data of a booking
	// (empty fields when it was erased).
	BookingContact(ctx context.Context, bookingID string) (bokat.BookingContact, error)
	// AcknowledgeBooking records the user's acknowledgement of a confirmed
	// booking and marks the provider's confirmation status sent.
	AcknowledgeBooking(ctx context.Context, bookingID, userID string, now time.Time) error
}
