package booking

import (
	"context"
	"time"

	"bokat"
	"bokat/internal/idem"
	"bokat/internal/notify"
	"bokat/internal/outbox"
)

// Store is what the lifecycle needs of the database outside a transaction.
type Store interface {
	// InTx runs fn in one write transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(Tx) error) error
	// InIdempotentTx runs fn in one write transaction guarded by the key
	// (see package idem): a replay returns the stored outcome and runs
	// nothing; otherwise fn's outcome is stored with the key in the same
	// transaction. expiresAt zero keeps the key as long as its resource.
	InIdempotentTx(ctx context.Context, k idem.Key, fingerprint string, now, expiresAt time.Time,
		fn func(Tx) (idem.Outcome, error)) (idem.Outcome, bool, error)
	// IdempotencyKeyExists reports whether the key has a stored record.
	IdempotencyKeyExists(ctx context.Context, k idem.Key) (bool, error)
	// OwnedBooking returns the booking whose id or request id is
	// idOrRequestID and that belongs to the owner, or bokat.ErrNotFound: an
	// unknown id and another owner's booking look alike.
	OwnedBooking(ctx context.Context, idOrRequestID, ownerClientID, ownerUserID string) (bokat.Booking, error)
	// ProviderName returns the name of a provider, or bokat.ErrNotFound.
	ProviderName(ctx context.Context, providerID string) (string, error)
}

// Tx is a write transaction as a booking write uses it.
type Tx interface {
	// BookingByID returns a booking whoever owns it, or bokat.ErrNotFound.
	BookingByID(ctx context.Context, id string) (bokat.Booking, error)
	// OwnedBookingForUpdate is Store.OwnedBooking by canonical id, holding
	// the booking against concurrent writers until the transaction ends.
	OwnedBookingForUpdate(ctx context.Context, id, ownerClientID, ownerUserID string) (bokat.Booking, error)
	// BookingAddresses returns the stored service and destination
	// addresses of a booking (the only fields of the contact it sets), or
	// bokat.ErrNotFound.
	BookingAddresses(ctx context.Context, bookingID string) (bokat.BookingContact, error)
	// InsertBooking writes a new confirmed booking with the customer's
	// contact data and consent, and its active calendar entry entryID over
	// the slot. An overlap with another active booking entry of the
	// provider fails with an error wrapping ErrSlotTaken and
	// bokat.ErrConflict.
	InsertBooking(ctx context.Context, b bokat.Booking, c bokat.BookingContact, consent bokat.BookingConsent,
		entryID string, now time.Time) error
	// MoveBooking stores the reschedule of b (its slot, price, terms
	// acceptance, postcodes, c's addresses, RescheduledAt and Sequence),
	// clears the delivery statuses and moves its calendar entry, held to
	// InsertBooking's rule (ErrSlotTaken). It returns bokat.ErrNotFound
	// unless b is a confirmed booking.
	MoveBooking(ctx context.Context, b bokat.Booking, c bokat.BookingContact, now time.Time) error
	// CancelBooking stores the cancellation of b (CancelledAt,
	// CancelReason, Sequence) with notes, clears the delivery statuses and
	// frees the slot. It returns bokat.ErrNotFound unless b is a confirmed
	// booking.
	CancelBooking(ctx context.Context, b bokat.Booking, notes string, now time.Time) error
	// RecordChangeConsent records how the user's consent to the
	// cancellation or reschedule of booking id was obtained.
	RecordChangeConsent(ctx context.Context, id string, method bokat.ConsentMethod) error
	// UseElicitationNonce records the nonce of an elicitation state as
	// used; it fails with an error wrapping bokat.ErrConflict when it was
	// used before.
	UseElicitationNonce(ctx context.Context, nonce string, expiresAt, now time.Time) error
	// LockProviderCalendar serialises, until the transaction ends, the
	// writers that add bookings to one provider's calendar.
	LockProviderCalendar(ctx context.Context, providerID string) error
	// ProviderSupply reads one provider with its postcodes, services,
	// working hours and active blocked periods, or returns
	// bokat.ErrNotFound.
	ProviderSupply(ctx context.Context, providerID string) (bokat.ProviderSupply, error)
	// BusyEntries returns the active calendar entries of the providers
	// that overlap [from, to), ordered by provider and start.
	BusyEntries(ctx context.Context, providerIDs []string, from, to time.Time) ([]bokat.CalendarEntry, error)
	// ProviderName returns the name of a provider, or bokat.ErrNotFound.
	ProviderName(ctx context.Context, providerID string) (string, error)
	// InsertOutboxEvent writes the event of a booking change.
	InsertOutboxEvent(ctx context.Context, e outbox.Event) error
	// InsertNotificationJob queues a message about a booking change.
	InsertNotificationJob(ctx context.Context, j notify.Job) error
}
