package booking

import (
	"context"
	"fmt"
	"time"

	"bokat"
)

// testClockKey carries a test principal's clock offset in a request's
// context.
type testClockKey struct{}

// WithTestClock returns ctx carrying the offset of a test owner's clock
// (docs/testing.md, "The test clock"): searches and booking writes of the
// test realm made with it take now as the server's now plus offset. The
// HTTP layer sets it for test principals only; a live principal's
// requests never carry one, and Search and Lifecycle ignore it outside
// the test realm.
func WithTestClock(ctx context.Context, offset time.Duration) context.Context {
	return context.WithValue(ctx, testClockKey{}, offset)
}

// TestClockOffset returns the test clock's offset ctx carries (zero when
// none).
func TestClockOffset(ctx context.Context) time.Duration {
	d, _ := ctx.Value(testClockKey{}).(time.Duration)
	return d
}

// realmNow is the now of a request of the realm mode at the server's now:
// the server's in the live realm, the test owner's clock in the test
// realm.
func realmNow(ctx context.Context, mode bokat.Mode, now time.Time) time.Time {
	if !mode.Test() {
		return now
	}
	return now.Add(TestClockOffset(ctx))
}

// serverTime is the server's time of t, a time of the realm mode's clock
// in ctx: when a worker should act on a row (a notification job's next
// attempt) is always kept on the server's clock, so that the workers read
// no owner's clock.
func serverTime(ctx context.Context, mode bokat.Mode, t time.Time) time.Time {
	if !mode.Test() {
		return t
	}
	return t.Add(-TestClockOffset(ctx))
}

// OwnerNow is the now of booking b's owner at the server's now, for work
// done on b outside its owner's requests (a worker, the operator): the
// server's for a live booking, its owner's test clock for a test booking.
// The context returned carries that clock, for the writes that follow.
func OwnerNow(ctx context.Context, tx Tx, b bokat.Booking, now time.Time) (context.Context, time.Time, error) {
	if !b.Mode.Test() {
		return ctx, now, nil
	}
	off, err := tx.TestClockOffset(ctx, b.OwnerClientID, b.OwnerUserID)
	if err != nil {
		return ctx, now, fmt.Errorf("read the test clock of booking %s: %w", b.ID, err)
	}
	ctx = WithTestClock(ctx, off)
	return ctx, realmNow(ctx, b.Mode, now), nil
}
