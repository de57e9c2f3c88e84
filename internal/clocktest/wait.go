package clocktest

import (
	"context"
	"testing"
	"time"
)

// Tests wait for work running beside them (a worker's pass, a process's
// start-up, a delivery) without a time limit of their own: a limit picked
// for an idle machine fails on a busy one although nothing is wrong. They
// wait instead until shortly before the test binary's own deadline (go
// test -timeout), so that a hang still fails with a message that says what
// was awaited, and speed alone never does.

// graceBeforeDeadline is left of the test binary's deadline for the failure
// to be reported before the binary is stopped.
const graceBeforeDeadline = 5 * time.Second

// pollEvery is how often Wait tries its condition.
const pollEvery = 5 * time.Millisecond

// Patience returns a context that ends shortly before the test binary's
// deadline, or when the test ends; it has no deadline when the binary has
// none (-timeout 0).
func Patience(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			ctx, cancel = context.WithDeadline(context.Background(), deadline.Add(-graceBeforeDeadline))
		}
	}
	tb.Cleanup(cancel)
	return ctx
}

// Wait polls cond until it holds. It fails tb, naming what it awaited, only
// when Patience runs out.
func Wait(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	ctx := Patience(tb)
	for !cond() {
		select {
		case <-ctx.Done():
			tb.Fatalf("gave up waiting for %s before the test binary's deadline", what)
		case <-time.After(pollEvery):
		}
	}
}

// Receive returns the next value from ch, failing tb, naming what it
// awaited, only when Patience runs out.
func Receive[T any](tb testing.TB, what string, ch <-chan T) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-Patience(tb).Done():
		tb.Fatalf("gave up waiting for %s before the test binary's deadline", what)
		var zero T
		return zero
	}
}
