package testrealm

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// ExpiredBooking is a test booking whose contact data expired on its
// owner's test clock, and that clock's offset.
type ExpiredBooking struct {
	ID     string
	Offset time.Duration
}

// RetentionStore finds the test bookings whose contact data expired on
// their owner's clock (the store).
type RetentionStore interface {
	// ExpiredTestBookings returns up to limit test bookings, of owners
	// whose clock moved, still holding contact data whose slot ended or
	// that were cancelled before before on that clock.
	ExpiredTestBookings(ctx context.Context, before time.Time, limit int) ([]ExpiredBooking, error)
}

// Eraser erases a booking's contact data (privacy.Tx's
// EraseBookingContact, in a transaction of its own): when it still holds
// it and its slot ended or it was cancelled before endedBefore, recording
// now as the erasure.
type Eraser func(ctx context.Context, id string, now, endedBefore time.Time) (bool, error)

// Retention is the booking retention of the test realm on its owners'
// clocks: the server's retention job counts on the server's clock, so a
// test owner who advances its clock past a booking's retention would wait
// for real time; this erases such bookings' contact data (and their
// captured messages) as the job would at the owner's now. It touches only
// test bookings of owners whose clock moved.
type Retention struct {
	store  RetentionStore
	erase  Eraser
	retain time.Duration
	now    func() time.Time
	log    *slog.Logger
}

// NewRetention returns the test realm's retention of bookings for retain
// (the server's --retain-bookings).
func NewRetention(store RetentionStore, erase Eraser, retain time.Duration, now func() time.Time, log *slog.Logger) *Retention {
	return &Retention{store: store, erase: erase, retain: retain, now: now, log: log}
}

// RunOnce erases what is due and returns how many bookings it erased.
func (r *Retention) RunOnce(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		server := r.now().UTC()
		due, err := r.store.ExpiredTestBookings(ctx, server.Add(-r.retain), 200)
		if err != nil {
			return n, fmt.Errorf("find expired test bookings: %w", err)
		}
		erased := 0
		for _, b := range due {
			now := server.Add(b.Offset)
			ok, err := r.erase(ctx, b.ID, now, now.Add(-r.retain))
			if err != nil {
				return n, fmt.Errorf("erase test booking %s: %w", b.ID, err)
			}
			if ok {
				erased++
			}
		}
		n += erased
		if len(due) < 200 || erased == 0 {
			return n, nil
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
