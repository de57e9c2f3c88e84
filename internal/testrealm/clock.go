package testrealm

import (
	"context"
	"fmt"
	"time"

	"bokat"
)

// MaxClockOffset bounds how far a test clock may stand ahead of the
// server's: four years, past the default booking retention (three years
// after the slot ended) of a booking at the end of a test provider's
// horizon.
const MaxClockOffset = 4 * 366 * 24 * time.Hour

// ClockStore keeps the test owners' clocks (the store).
type ClockStore interface {
	// TestClockOffset returns how far the owner's clock stands ahead of
	// the server's (zero when it never moved).
	TestClockOffset(ctx context.Context, clientID, userID string) (time.Duration, error)
	// AdvanceTestClock moves the owner's clock forward by what step
	// returns for its offset, and the owner's pending test deliveries
	// earlier by as much, in one transaction; it returns the new offset.
	AdvanceTestClock(ctx context.Context, clientID, userID string, now time.Time,
		step func(offset time.Duration) (time.Duration, error)) (time.Duration, error)
}

// Clock is the test clock of each test owner (docs/testing.md, "The test
// clock"): the server's clock moved ahead by an offset of the owner's own,
// which only grows. The requests of the owner's test credential take it as
// now; live principals have none.
type Clock struct {
	store ClockStore
	now   func() time.Time
	// OnAdvance, when set, is called after a clock moved (serve wakes the
	// workers whose work may have become due with it).
	OnAdvance func()
}

// NewClock returns the test clocks kept in store, on the server's clock.
func NewClock(store ClockStore, now func() time.Time) *Clock {
	if now == nil {
		now = time.Now
	}
	return &Clock{store: store, now: now}
}

// ClockState is an owner's test clock: its now and its offset from the
// server's.
type ClockState struct {
	Now    time.Time
	Offset time.Duration
}

// Offset returns the offset of the test principal's clock; a live
// principal's is always zero and is not looked up.
func (c *Clock) Offset(ctx context.Context, p bokat.Principal) (time.Duration, error) {
	if !p.Realm().Test() {
		return 0, nil
	}
	return c.store.TestClockOffset(ctx, p.ClientID, p.UserID)
}

// Read returns the test principal's clock.
func (c *Clock) Read(ctx context.Context, p bokat.Principal) (ClockState, error) {
	if err := testOnly(p); err != nil {
		return ClockState{}, err
	}
	now := c.now().UTC()
	off, err := c.Offset(ctx, p)
	if err != nil {
		return ClockState{}, err
	}
	return ClockState{Now: now.Add(off), Offset: off}, nil
}

// Advance moves the test principal's clock forward, by by or to to (one
// of them, the other zero), at most to MaxClockOffset ahead of the
// server's. Errors are *bokat.Error validation_failed: a step that is not
// forward, or beyond the bound.
func (c *Clock) Advance(ctx context.Context, p bokat.Principal, by time.Duration, to time.Time) (ClockState, error) {
	if err := testOnly(p); err != nil {
		return ClockState{}, err
	}
	if (by == 0) == to.IsZero() {
		return ClockState{}, bokat.Errorf(bokat.CodeValidationFailed, "Send exactly one of seconds and to.")
	}
	now := c.now().UTC()
	off, err := c.store.AdvanceTestClock(ctx, p.ClientID, p.UserID, now, func(old time.Duration) (time.Duration, error) {
		step := by
		if !to.IsZero() {
			step = to.Sub(now.Add(old)).Truncate(time.Millisecond)
		}
		return checkStep(step, old, now)
	})
	if err != nil {
		return ClockState{}, err
	}
	if c.OnAdvance != nil {
		c.OnAdvance()
	}
	return ClockState{Now: now.Add(off), Offset: off}, nil
}

// checkStep refuses a step that is not forward, or that would put the
// clock more than MaxClockOffset ahead of the server's.
func checkStep(step, old time.Duration, now time.Time) (time.Duration, error) {
	if step <= 0 {
		return 0, bokat.Errorf(bokat.CodeValidationFailed,
			"The test clock only moves forward: to must be later than the clock's now (%s).",
			now.Add(old).Format(time.RFC3339))
	}
	if old+step > MaxClockOffset {
		return 0, &bokat.Error{Code: bokat.CodeValidationFailed,
			Detail: fmt.Sprintf("The test clock may stand at most %d days ahead of the server's; it stands %s ahead, "+
				"so it can move at most %d seconds more.", int(MaxClockOffset.Hours()/24), old.Truncate(time.Second),
				int64((MaxClockOffset - old).Seconds())),
			Extra: map[string]any{"max_offset_seconds": int64(MaxClockOffset.Seconds())}}
	}
	return step, nil
}

// testOnly refuses a live principal: the test clock is the test realm's.
func testOnly(p bokat.Principal) error {
	if !p.Realm().Test() {
		return bokat.Errorf(bokat.CodeForbidden, "This route takes a test credential (a token starting with %s).",
			bokat.PartnerTestTokenPrefix)
	}
	return nil
}
