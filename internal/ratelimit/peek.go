package ratelimit

import (
	"context"
	"math"
)

// Peeker is a Limiter that can also tell, without spending anything,
// whether key has a request left under p. Budgets that are spent only by
// failures (failed client authentication) are checked with Peek before the
// work and spent with Allow after a failure.
type Peeker interface {
	Limiter
	// Peek reports whether one more request of key would be allowed now,
	// with Remaining, RetryAfter (when not) and Reset; it spends nothing.
	Peek(ctx context.Context, p Policy, key string) (Decision, error)
}

var _ Peeker = (*Memory)(nil)

// Peek reports key's state under p without spending. It never fails.
func (m *Memory) Peek(_ context.Context, p Policy, key string) (Decision, error) {
	if !p.Enabled() {
		return Decision{Allowed: true, Remaining: math.MaxInt32}, nil
	}
	now := m.now()
	perSecond := float64(p.Quota) / p.Window.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetIdle(now)
	el, ok := m.entries[memKey{policy: p, key: key}]
	if !ok {
		return Decision{Allowed: true, Remaining: p.Quota}, nil
	}
	tokens := el.Value.(*memEntry).lim.TokensAt(now)
	d := Decision{
		Allowed:   tokens >= 1,
		Remaining: max(int(math.Floor(tokens)), 0),
		Reset:     seconds((float64(p.Quota) - tokens) / perSecond),
	}
	if !d.Allowed {
		d.RetryAfter = seconds((1 - tokens) / perSecond)
	}
	return d, nil
}
