package booking

import (
	"context"
	"errors"
	"time"

	"bokat"
	"bokat/internal/idem"
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
	InsertNotificationJob(ctx context.Context, j bokat.NotificationJob) error
	// TestClockOffset returns how far the test owner's clock stands ahead
	// of the server's (zero for an owner that never moved it).
	TestClockOffset(ctx context.Context, clientID, userID string) (time.Duration, error)
}

// ErrSlotTaken is returned (wrapping bokat.ErrConflict) by Tx.InsertBooking
// and Tx.MoveBooking when a booking's calendar entry would overlap another
// active booking entry of the same provider: the store's no-overlap rule
// (PostgreSQL's exclusion constraint calendar_entries_no_overlap, SQLite's
// trigger of the same name) refused it.
var ErrSlotTaken = errors.New("the provider already has an active booking overlapping the slot")

// SupplyStore is what search reads from the store.
type SupplyStore interface {
	// Revisions returns the supply and the calendar revision, read together.
	Revisions(ctx context.Context) (supply, calendar int64, err error)
	// ReadAvailability reads in one snapshot the revisions, the supply when
	// its revision is not supplyRev, and the active calendar entries ending
	// after endAfter of every provider (full, or calendarRev negative) or of
	// those whose calendar changed after calendarRev. It hands the supply
	// to supply in runs of providers ordered by id (each run read after the
	// last returned; an error ends the read), so that a caller keeping a
	// compact form holds one run as read at a time, not the whole supply.
	// With supply nil the supply is not read.
	ReadAvailability(ctx context.Context, supplyRev, calendarRev int64, full bool, endAfter time.Time,
		supply func(run []bokat.ProviderSupply) error) (Availability, error)
}

// Supply is a consistent read of every provider's supply (blocked periods
// aside: they live in the calendar) at one revision.
type Supply struct {
	// Revision increases with every committed change of the supply tables.
	Revision  int64
	Providers []bokat.ProviderSupply
}

// BusySpan is a busy interval [Start, End) in Unix milliseconds.
type BusySpan struct{ Start, End int64 }

// ProviderCalendar is one provider's active calendar entries as search
// keeps them: when it is busy, ordered by start, and whether each entry is
// a booking (else a blocked period). Spans and Booking have one element per
// entry; search keeps both as they are, read-only.
type ProviderCalendar struct {
	ProviderID string
	Spans      []BusySpan
	Booking    []bool
}

// Availability is one consistent read of what search keeps in memory: the
// revisions, whether the supply moved on (it was handed over in runs),
// and calendar entries.
type Availability struct {
	SupplyRevision, CalendarRevision int64
	// SupplyRead reports that the supply at SupplyRevision was handed to
	// the caller's function (its revision was not the one the caller
	// holds, and the caller gave one).
	SupplyRead bool
	// Full reports that Entries hold every provider's entries; otherwise
	// they hold those of Changed only, and providers not in Changed are as
	// the caller holds them.
	Full bool
	// Changed lists the providers whose calendar changed after the
	// calendar revision the caller holds (when not Full).
	Changed []string
	// Calendars hold the active calendar entries ending after the asked
	// instant, one per provider that has any, ordered by provider id.
	Calendars []ProviderCalendar
}

// EntryCount returns the number of calendar entries in a.
func (a Availability) EntryCount() int {
	n := 0
	for _, c := range a.Calendars {
		n += len(c.Spans)
	}
	return n
}
