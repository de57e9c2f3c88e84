// Package redislimit is the rate limiter whose state lives in Redis, so
// that every instance of Bokat using the same server and prefix shares one
// quota per key. It is a package of its own so that only the program that
// configures Redis links the Redis client.
package redislimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"bokat/internal/ratelimit"
)

// DefaultPrefix starts every key the Redis limiter writes.
const DefaultPrefix = "bokat:rl:"

var _ ratelimit.Peeker = (*Limiter)(nil)

// Limiter is a limiter whose state lives in Redis, so that every instance
// using the same server and prefix shares one quota per key. It runs GCRA,
// the token bucket's twin, in one Lua script (atomic on the server) on the
// instance's clock: the script is handed the time, so an injected clock
// decides every answer, and instances share a quota as closely as their
// clocks agree. A key is dropped by Redis once it has been idle for a whole
// window (its quota has refilled by then), as the in-process limiter forgets
// it.
//
// Keys are stored as a SHA-256 digest of the caller's key, so Redis never
// holds client ids or IP addresses in clear.
//
// After a failure it reports ratelimit.ErrUnavailable at once for a short
// cool-down instead of waiting on a dead server for every request.
type Limiter struct {
	client   redis.UniversalClient
	prefix   string
	cooldown time.Duration
	now      func() time.Time
	// downUntil is the Unix nanosecond instant the cool-down ends.
	downUntil atomic.Int64
}

// Options configures a Limiter.
type Options struct {
	// Prefix starts every key; DefaultPrefix by default.
	Prefix string
	// Cooldown is how long to skip Redis after a failure; 1s by default.
	Cooldown time.Duration
	// Now is the clock of the quotas and of the cool-down; time.Now by
	// default.
	Now func() time.Time
}

// New returns a limiter on the client.
func New(client redis.UniversalClient, opts Options) *Limiter {
	r := &Limiter{client: client, prefix: opts.Prefix, cooldown: opts.Cooldown, now: opts.Now}
	if r.now == nil {
		r.now = time.Now
	}
	if r.prefix == "" {
		r.prefix = DefaultPrefix
	}
	if r.cooldown <= 0 {
		r.cooldown = time.Second
	}
	return r
}

// Dial returns a client for a redis:// or rediss:// URL with short
// timeouts suited to a limiter that fails open: a slow Redis must not slow
// every request. The URL's own dial_timeout, read_timeout, write_timeout
// and max_retries parameters win over those defaults. It does not connect
// yet.
func Dial(rawURL string) (*redis.Client, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	q := u.Query()
	if !q.Has("dial_timeout") {
		opts.DialTimeout = 250 * time.Millisecond
	}
	if !q.Has("read_timeout") {
		opts.ReadTimeout = 250 * time.Millisecond
	}
	if !q.Has("write_timeout") {
		opts.WriteTimeout = 250 * time.Millisecond
	}
	if !q.Has("max_retries") {
		opts.MaxRetries = 1
	}
	opts.DialerRetries = 1
	opts.ContextTimeoutEnabled = true
	opts.DisableIdentity = true
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return redis.NewClient(opts), nil
}

// Allow spends one request of key's quota under p.
func (r *Limiter) Allow(ctx context.Context, p ratelimit.Policy, key string) (ratelimit.Decision, error) {
	if !p.Enabled() {
		return ratelimit.Decision{Allowed: true, Remaining: 1 << 31}, nil
	}
	g := newGCRA(p)
	allowed, ahead, err := r.run(ctx, p, key, g, 1)
	if err != nil {
		return ratelimit.Decision{}, err
	}
	return g.decide(allowed, ahead), nil
}

// Peek reports key's state under p without spending (the script at cost
// zero, which leaves the key as it was).
func (r *Limiter) Peek(ctx context.Context, p ratelimit.Policy, key string) (ratelimit.Decision, error) {
	if !p.Enabled() {
		return ratelimit.Decision{Allowed: true, Remaining: 1 << 31}, nil
	}
	g := newGCRA(p)
	_, ahead, err := r.run(ctx, p, key, g, 0)
	if err != nil {
		return ratelimit.Decision{}, err
	}
	return g.decide(ahead+g.emission <= g.window, ahead), nil
}

// run runs the script for cost requests of key under p (cost 0 spends
// nothing) and returns its verdict and how far the key's TAT is ahead of
// now after the call.
func (r *Limiter) run(ctx context.Context, p ratelimit.Policy, key string, g gcraParams, cost int64) (allowed bool, ahead int64, err error) {
	now := r.now()
	if until := r.downUntil.Load(); until != 0 && now.UnixNano() < until {
		return false, 0, fmt.Errorf("%w: cooling down after a failure", ratelimit.ErrUnavailable)
	}
	nowUS := now.UnixMicro()
	res, err := gcraScript.Run(ctx, r.client, []string{r.key(p, key)},
		nowUS, g.emission, g.window, cost, max(p.Window.Milliseconds(), 1)).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("the rate-limit script answered %d values, want 2", len(res))
	}
	if err != nil {
		r.downUntil.Store(r.now().Add(r.cooldown).UnixNano())
		return false, 0, fmt.Errorf("%w: %w", ratelimit.ErrUnavailable, err)
	}
	r.downUntil.Store(0)
	return res[0] == 1, max(res[1]-nowUS, 0), nil
}

// gcraParams is a policy in the script's integer microseconds: one request
// is earned every emission, and the theoretical arrival time (TAT) of the
// next request may run at most window ahead of now (the whole quota spent).
type gcraParams struct {
	emission, window int64
}

func newGCRA(p ratelimit.Policy) gcraParams {
	window := p.Window.Microseconds()
	// Rounding the emission interval down keeps quota emissions within the
	// window, so a burst of exactly the quota is allowed at any quota.
	return gcraParams{emission: max(window/int64(p.Quota), 1), window: window}
}

// decide reads a decision from a verdict and how far the key's TAT is
// ahead of now (µs, never negative).
func (g gcraParams) decide(allowed bool, ahead int64) ratelimit.Decision {
	d := ratelimit.Decision{
		Allowed:   allowed,
		Remaining: int(max(g.window-ahead, 0) / g.emission),
		Reset:     time.Duration(ahead) * time.Microsecond,
	}
	if !allowed {
		d.RetryAfter = max(time.Duration(ahead+g.emission-g.window)*time.Microsecond, time.Microsecond)
	}
	return d
}

// gcraScript spends ARGV[4] requests of KEYS[1] at ARGV[1] (Unix
// microseconds, the caller's clock) when the key's TAT, plus ARGV[2]
// (emission interval, µs) per request, stays within ARGV[3] (window, µs)
// of now. It answers {1 if allowed else 0, the key's TAT after the call}.
// An allowed spend stores the new TAT and keeps the key for ARGV[5]
// milliseconds (the window): a key left alone that long has refilled. A
// cost of 0 writes nothing. Integer microseconds stay exact in Lua's
// doubles until the year 2255.
var gcraScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local emission = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local tat = tonumber(redis.call("GET", KEYS[1]) or ARGV[1])
if tat < now then
  tat = now
end
local after = tat + cost * emission
if after - now > window then
  return {0, tat}
end
if cost > 0 then
  redis.call("SET", KEYS[1], string.format("%.0f", after), "PX", ARGV[5])
end
return {1, after}
`)

// key names the Redis key of (p, key). The policy's quota and window are
// part of it so that instances configured differently never share state.
func (r *Limiter) key(p ratelimit.Policy, key string) string {
	sum := sha256.Sum256([]byte(key))
	return fmt.Sprintf("%s%s:%d:%d:%s", r.prefix, p.Name, p.Quota, int64(p.Window/time.Second), hex.EncodeToString(sum[:16]))
}

// Logger adapts a slog.Logger to go-redis's library logger (redis.SetLogger),
// so that its connection-pool complaints come out as JSON warnings.
type Logger struct{ Log *slog.Logger }

// Printf implements go-redis's logging interface.
func (l Logger) Printf(ctx context.Context, format string, v ...any) {
	l.Log.WarnContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}
