package testrealm

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"bokat"
	"bokat/internal/privacy"
)

// Expired is a test booking or follow-up request whose contact data
// expired on its owner's test clock, and that clock's offset.
type Expired struct {
	ID     string
	Offset time.Duration
}

// RetentionStore finds and erases the test bookings and follow-up requests
// whose contact data expired on their owner's clock (the store). Each
// method touches the test realm only.
type RetentionStore interface {
	// ExpiredTestBookings returns up to limit test bookings, of owners
	// whose clock moved, still holding contact data whose slot ended or
	// that were cancelled before before on that clock.
	ExpiredTestBookings(ctx context.Context, before time.Time, limit int) ([]Expired, error)
	// ExpiredTestRequests returns up to limit test follow-up requests, of
	// owners whose clock moved, still holding contact data and created
	// before before on that clock.
	ExpiredTestRequests(ctx context.Context, before time.Time, limit int) ([]Expired, error)
	// EraseTestBookingContact erases a test booking's contact data (and
	// its captured messages) in a transaction of its own, when it still
	// holds it and its slot ended or it was cancelled before endedBefore,
	// recording now as the erasure; it reports whether it erased.
	EraseTestBookingContact(ctx context.Context, id string, now, endedBefore time.Time) (bool, error)
	// EraseTestRequestContact is EraseTestBookingContact for a test
	// follow-up request created before createdBefore.
	EraseTestRequestContact(ctx context.Context, id string, now, createdBefore time.Time) (bool, error)
}

// Retention is the contact-data retention of the test realm on its owners'
// clocks: the server's retention job counts on the server's clock, so a
// test owner who advances its clock past a booking's or request's
// retention would wait for real time; this erases such bookings' and
// requests' contact data (and their captured messages) as the job would at
// the owner's now. It touches only test bookings and requests of owners
// whose clock moved.
type Retention struct {
	store  RetentionStore
	retain privacy.Retention
	now    func() time.Time
	log    *slog.Logger
}

// NewRetention returns the test realm's retention for retain (the server's
// --retain-bookings and --retain-requests).
func NewRetention(store RetentionStore, retain privacy.Retention, now func() time.Time, log *slog.Logger) *Retention {
	return &Retention{store: store, retain: retain, now: now, log: log}
}

// retentionBatch is how many rows one pass of RunOnce looks at.
const retentionBatch = 200

// RunOnce erases what is due and returns how many bookings and requests it
// erased.
func (r *Retention) RunOnce(ctx context.Context) (int, error) {
	kinds := []struct {
		what   string
		retain time.Duration
		find   func(context.Context, time.Time, int) ([]Expired, error)
		erase  func(context.Context, string, time.Time, time.Time) (bool, error)
	}{
		{"booking", r.retain.Bookings, r.store.ExpiredTestBookings, r.store.EraseTestBookingContact},
		{"request", r.retain.Requests, r.store.ExpiredTestRequests, r.store.EraseTestRequestContact},
	}
	n := 0
	for _, k := range kinds {
		for ctx.Err() == nil {
			server := r.now().UTC()
			due, err := k.find(ctx, server.Add(-k.retain), retentionBatch)
			if err != nil {
				return n, fmt.Errorf("find expired test %ss: %w", k.what, err)
			}
			erased := 0
			for _, e := range due {
				now := bokat.RealmNow(bokat.WithTestClock(ctx, e.Offset), bokat.ModeTest, server)
				ok, err := k.erase(ctx, e.ID, now, now.Add(-k.retain))
				if err != nil {
					return n, fmt.Errorf("erase test %s %s: %w", k.what, e.ID, err)
				}
				if ok {
					erased++
				}
			}
			n += erased
			if len(due) < retentionBatch || erased == 0 {
				break
			}
		}
	}
	return n, ctx.Err()
}

// Run erases what is due every interval, and at once when wake (which may
// be nil) fires, until ctx ends; a failed round is logged and retried by
// the next.
func (r *Retention) Run(ctx context.Context, interval time.Duration, wake *Waker) error {
	return runRounds(ctx, interval, wake, r.log, "test realm retention", r.RunOnce)
}
