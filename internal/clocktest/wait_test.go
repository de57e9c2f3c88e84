package clocktest

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// deadlineTB is a test whose binary's deadline is at deadline; Fatalf
// records the message and ends the goroutine, as testing.T's does.
type deadlineTB struct {
	testing.TB
	deadline time.Time
	fatal    string
	cleanups []func()
}

func (f *deadlineTB) Helper()                           {}
func (f *deadlineTB) Deadline() (time.Time, bool)       { return f.deadline, true }
func (f *deadlineTB) Cleanup(fn func())                 { f.cleanups = append(f.cleanups, fn) }
func (f *deadlineTB) Fatalf(format string, args ...any) { f.fatal = format; runtime.Goexit() }

// run calls fn as a test body on its own goroutine and returns the fake.
func run(deadline time.Time, fn func(tb *deadlineTB)) *deadlineTB {
	f := &deadlineTB{deadline: deadline}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			for _, c := range f.cleanups {
				c()
			}
		}()
		fn(f)
	}()
	<-done
	return f
}

func TestWaitReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	n := 0
	Wait(t, "three polls", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("cond called %d times, want 3", n)
	}
	ch := make(chan int, 1)
	ch <- 7
	if got := Receive(t, "a value", ch); got != 7 {
		t.Fatalf("Receive = %d, want 7", got)
	}
}

// Past the binary's deadline (less the grace) Wait and Receive fail,
// saying what they awaited.
func TestWaitGivesUpOnlyAtTheBinarysDeadline(t *testing.T) {
	t.Parallel()
	soon := time.Now().Add(graceBeforeDeadline)
	f := run(soon, func(tb *deadlineTB) { Wait(tb, "the impossible", func() bool { return false }) })
	if !strings.Contains(f.fatal, "gave up waiting") {
		t.Fatalf("Wait past the deadline: fatal %q, want a failure", f.fatal)
	}
	f = run(soon, func(tb *deadlineTB) { Receive(tb, "nothing", make(chan int)) })
	if !strings.Contains(f.fatal, "gave up waiting") {
		t.Fatalf("Receive past the deadline: fatal %q, want a failure", f.fatal)
	}
	ctx := Patience(t)
	if d, ok := t.Deadline(); ok {
		if got, _ := ctx.Deadline(); !got.Equal(d.Add(-graceBeforeDeadline)) {
			t.Fatalf("Patience deadline = %v, want %v", got, d.Add(-graceBeforeDeadline))
		}
	}
}
