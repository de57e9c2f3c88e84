package ratelimit

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/go-redis/redis_rate/v10"
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

var (
	_ Peeker = (*Memory)(nil)
	_ Peeker = (*Redis)(nil)
)

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

// Peek reports key's state under p without spending (a GCRA call of cost
// zero, which leaves the key as it was).
func (r *Redis) Peek(ctx context.Context, p Policy, key string) (Decision, error) {
	if !p.Enabled() {
		return Decision{Allowed: true, Remaining: 1 << 31}, nil
	}
	if until := r.downUntil.Load(); until != 0 && r.now().UnixNano() < until {
		return Decision{}, fmt.Errorf("%w: cooling down after a failure", ErrUnavailable)
	}
	limit := redis_rate.Limit{Rate: p.Quota, Burst: p.Quota, Period: p.Window}
	res, err := r.lim.AllowN(ctx, r.key(p, key), limit, 0)
	if err != nil {
		r.downUntil.Store(r.now().Add(r.cooldown).UnixNano())
		return Decision{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	r.downUntil.Store(0)
	reset := max(res.ResetAfter, 0)
	d := Decision{Allowed: res.Remaining >= 1, Remaining: max(res.Remaining, 0), Reset: reset}
	if !d.Allowed {
		// One request is back when the whole quota but one has refilled.
		emission := p.Window / time.Duration(p.Quota)
		d.RetryAfter = max(reset-emission*time.Duration(p.Quota-1), time.Millisecond)
	}
	return d, nil
}
