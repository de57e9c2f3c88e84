package bokat

import (
	"context"
	"time"
)

// The test clock (docs/testing.md, "The test clock"): each owner of the
// test realm has a clock of its own, the server's moved ahead by an offset
// that only grows. Everything of the test realm that counts time — a
// booking, a follow-up request, the workers acting on them — reads it
// through these functions; the live realm has no clock but the server's.

// testClockKey carries a test principal's clock offset in a request's
// context.
type testClockKey struct{}

// WithTestClock returns ctx carrying the offset of a test owner's clock:
// writes of the test realm made with it take now as the server's now plus
// offset (RealmNow). The HTTP layer sets it for test principals only; a
// live principal's requests never carry one, and RealmNow ignores it
// outside the test realm.
func WithTestClock(ctx context.Context, offset time.Duration) context.Context {
	return context.WithValue(ctx, testClockKey{}, offset)
}

// TestClockOffset returns the test clock's offset ctx carries (zero when
// none).
func TestClockOffset(ctx context.Context) time.Duration {
	d, _ := ctx.Value(testClockKey{}).(time.Duration)
	return d
}

// RealmNow is the now of work of the realm mode at the server's now: the
// server's in the live realm, the test owner's clock ctx carries in the
// test realm.
func RealmNow(ctx context.Context, mode Mode, serverNow time.Time) time.Time {
	if !mode.Test() {
		return serverNow
	}
	return serverNow.Add(TestClockOffset(ctx))
}

// ServerTime is the server's time of t, a time of the realm mode's clock
// in ctx: when a worker should act on a row (a notification job's next
// attempt) is always kept on the server's clock, so that the workers read
// no owner's clock.
func ServerTime(ctx context.Context, mode Mode, t time.Time) time.Time {
	if !mode.Test() {
		return t
	}
	return t.Add(-TestClockOffset(ctx))
}

// TestClocks reads the test owners' clocks (the store, or a transaction of
// it).
type TestClocks interface {
	// TestClockOffset returns how far the owner's clock stands ahead of
	// the server's (zero when it never moved).
	TestClockOffset(ctx context.Context, clientID, userID string) (time.Duration, error)
}

// OwnerNow is the now, at the server's now, of the owner of an object of
// the realm mode (a booking, a follow-up request), for work done on it
// outside its owner's requests (a worker, the operator): the server's for
// a live object, its owner's test clock, read from clocks, for a test one.
// The context returned carries that clock, for the writes that follow.
func OwnerNow(ctx context.Context, clocks TestClocks, mode Mode, clientID, userID string, now time.Time) (context.Context, time.Time, error) {
	if !mode.Test() {
		return ctx, now, nil
	}
	off, err := clocks.TestClockOffset(ctx, clientID, userID)
	if err != nil {
		return ctx, now, err
	}
	ctx = WithTestClock(ctx, off)
	return ctx, RealmNow(ctx, mode, now), nil
}
