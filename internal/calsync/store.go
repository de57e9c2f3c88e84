package calsync

import (
	"context"
	"errors"
	"time"

	"bokat"
)

// Feed is one calendar subscription of a provider.
type Feed struct {
	ID         string
	ProviderID string
	// URL is the feed's address: a secret, stored sealed; it never appears
	// in logs, errors or events. Label (its host) is what people see.
	URL    string
	Label  string
	Rule   Rule
	Source string
	// CreatedAt; LastAttemptAt and LastSyncedAt (the last poll, the last
	// successful one, a 304 included); LastError (a summary without the
	// address) and FailingSince (the first failure since the last success)
	// are zero while none.
	CreatedAt     time.Time
	LastAttemptAt time.Time
	LastSyncedAt  time.Time
	LastError     string
	FailingSince  time.Time
	// BusyCount is how many busy intervals the feed holds now.
	BusyCount int
}

// Where a feed was added.
const (
	SourceSupply   = "supply"
	SourceOperator = "operator"
	SourceProvider = "provider"
)

// Claim is a feed leased to one worker for one poll.
type Claim struct {
	Feed
	// Token identifies the lease: results are written only under it.
	Token string
	// ETag, LastModified and BodyHash describe the body last read;
	// ExpandedUntil is how far its busy times were expanded.
	ETag, LastModified, BodyHash string
	ExpandedUntil                time.Time
	// HorizonDays is the provider's booking horizon.
	HorizonDays int
	// StaleNotifiedAt is when the provider was told the feed went stale.
	StaleNotifiedAt time.Time
}

// Outcome is what one poll of a feed found, written under its lease.
type Outcome struct {
	At time.Time
	// Err is the failure's summary ("" on success).
	Err string
	// On success: the validators and hash of the body read (kept as they
	// were when the server answered 304) and how far busy times were
	// expanded.
	ETag, LastModified, BodyHash string
	ExpandedUntil                time.Time
	// BusyCount is the feed's number of busy intervals after the poll.
	BusyCount int
}

// Conflict is a synced busy time over a confirmed booking.
type Conflict struct {
	BookingID  string
	SlotStart  time.Time
	ProviderID string
	FeedID     string
	// DetectedAt is when a sync found it; RaisedAt when its event was
	// queued (zero until then). Set when read.
	DetectedAt, RaisedAt time.Time
}

// BookedSlot is a confirmed booking's slot.
type BookedSlot struct {
	BookingID  string
	Start, End time.Time
}

// ErrLeaseLost is returned when a worker writes the outcome of a feed whose
// lease another worker holds now (it expired while the poll ran).
var ErrLeaseLost = errors.New("calendar feed lease lost")

// AddressState is what one provider's calendars hold of one address.
type AddressState struct {
	// Feeds counts the provider's calendars, whatever their address.
	Feeds int
	// Subscribed: one of them has the address.
	Subscribed bool
	// Dismissed: the address was removed by hand (DismissFeed) and not
	// added again by hand since.
	Dismissed bool
}

// Store is what calendar sync needs of the database outside a transaction.
type Store interface {
	// InTx runs fn in one write transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(Tx) error) error
	// ClaimFeeds leases up to limit feeds due at now (next poll reached,
	// no live lease) to the worker whose lease token is token: each gets
	// its next poll set to now+interval and its lease to now+lease. On
	// PostgreSQL concurrent workers skip each other's rows, so each due
	// feed goes to one worker.
	ClaimFeeds(ctx context.Context, now time.Time, interval, lease time.Duration, token string, limit int) ([]Claim, error)
	// ProviderFeeds returns a provider's feeds (addresses opened), oldest
	// first.
	ProviderFeeds(ctx context.Context, providerID string) ([]Feed, error)
	// FeedRefs returns every feed, oldest first per provider, with its
	// addresses left sealed (URL empty): it needs no sealing key.
	FeedRefs(ctx context.Context) ([]Feed, error)
	// ProviderConflicts returns the conflicts of the provider's bookings
	// still confirmed whose slot ends after now, by slot start.
	ProviderConflicts(ctx context.Context, providerID string, now time.Time) ([]Conflict, error)
	// UnraisedConflicts returns up to limit conflicts whose event is not
	// raised yet, oldest first.
	UnraisedConflicts(ctx context.Context, limit int) ([]Conflict, error)
	// MarkConflictRaised records that the conflict's event is queued.
	MarkConflictRaised(ctx context.Context, c Conflict, now time.Time) error
	// MarkStaleNotified records that the provider was told the feed went
	// stale.
	MarkStaleNotified(ctx context.Context, feedID string, now time.Time) error
	// ResealFeeds seals every feed address sealed with an older key with
	// the current sealing key, and returns how many it re-sealed.
	ResealFeeds(ctx context.Context) (int, error)
	// ProviderContact returns a provider's name and contact data, or an
	// error wrapping bokat.ErrNotFound.
	ProviderContact(ctx context.Context, providerID string) (bokat.ProviderContact, error)
	// FeedDismissed reports whether a calendar of the provider with the
	// address (as CheckURL gives it) was removed by hand (DismissFeed) and
	// not inserted again since.
	FeedDismissed(ctx context.Context, providerID, url string) (bool, error)
}

// Tx is a write transaction as calendar sync uses it.
type Tx interface {
	// InsertFeed stores a new feed, its address sealed. The same address
	// twice for one provider fails with an error wrapping
	// bokat.ErrConflict; an unknown provider with bokat.ErrNotFound. A feed
	// not from a supply file ends a removal by hand of its address
	// (FeedDismissed reports it no longer).
	InsertFeed(ctx context.Context, f Feed, now time.Time) error
	// DeleteFeed removes a provider's feed and its busy times, or returns
	// bokat.ErrNotFound.
	DeleteFeed(ctx context.Context, providerID, feedID string) error
	// CalendarAddress reads what the provider's calendars hold of the
	// address (as CheckURL gives it) when the transaction has taken the
	// provider's calendar lock: what a feed's insert must decide on.
	CalendarAddress(ctx context.Context, providerID, url string) (AddressState, error)
	// DismissFeed records that the provider's feed is removed by hand at
	// now: FeedDismissed then reports its address until a feed of the
	// provider with it is inserted again.
	DismissFeed(ctx context.Context, providerID, feedID string, now time.Time) error
	// SetFeedRule changes a feed's rule and makes it due at now (its busy
	// times are read again), or returns bokat.ErrNotFound.
	SetFeedRule(ctx context.Context, providerID, feedID string, rule Rule, now time.Time) error
	// FinishFeed writes a poll's outcome under the lease token and ends
	// the lease; it returns ErrLeaseLost when the feed's lease has another
	// token (or the feed is gone). A failure keeps the validators and the
	// busy times, and starts FailingSince unless it is running; a success
	// clears the error, FailingSince and StaleNotifiedAt.
	FinishFeed(ctx context.Context, feedID, token string, o Outcome) error
	// LockProviderCalendar serialises, until the transaction ends, the
	// writers of one provider's calendar (bookings and syncs).
	LockProviderCalendar(ctx context.Context, providerID string) error
	// ReplaceSyncedBusy makes busy (sorted, disjoint) the feed's active
	// busy intervals in the provider's calendar, writing only the
	// difference, and returns how many rows it wrote; the calendar
	// revision moves when it writes any.
	ReplaceSyncedBusy(ctx context.Context, providerID, feedID string, busy []Interval, now time.Time) (int, error)
	// ConfirmedSlots returns the provider's confirmed bookings whose slot
	// overlaps [from, to), ordered by start.
	ConfirmedSlots(ctx context.Context, providerID string, from, to time.Time) ([]BookedSlot, error)
	// InsertConflict records a conflict unless the booking's slot has one;
	// it reports whether it was new.
	InsertConflict(ctx context.Context, c Conflict, now time.Time) (bool, error)
}
