package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// DefaultRedisPrefix starts every key the Redis limiter writes.
const DefaultRedisPrefix = "bokat:rl:"

// Redis is a limiter whose state lives in Redis, so that every instance
// using the same server and prefix shares one quota per key. It runs the
// GCRA algorithm in one Lua script (atomic on the server, using the
// server's clock). Keys expire by themselves once their quota has refilled.
//
// Keys are stored as a SHA-256 digest of the caller's key, so Redis never
// holds client ids or IP addresses in clear.
//
// After a failure it reports ErrUnavailable at once for a short cool-down
// instead of waiting on a dead server for every request.
type Redis struct {
	lim      *redis_rate.Limiter
	prefix   string
	cooldown time.Duration
	now      func() time.Time
	// downUntil is the Unix nanosecond instant the cool-down ends.
	downUntil atomic.Int64
}

// RedisOptions configures a Redis limiter.
type RedisOptions struct {
	// Prefix starts every key; DefaultRedisPrefix by default.
	Prefix string
	// Cooldown is how long to skip Redis after a failure; 1s by default.
	Cooldown time.Duration
	// Now is the clock of the cool-down; time.Now by default.
	Now func() time.Time
}

// NewRedis returns a limiter on the client.
func NewRedis(client redis.UniversalClient, opts RedisOptions) *Redis {
	r := &Redis{lim: redis_rate.NewLimiter(ownKeys{client}), prefix: opts.Prefix, cooldown: opts.Cooldown, now: opts.Now}
	if r.now == nil {
		r.now = time.Now
	}
	if r.prefix == "" {
		r.prefix = DefaultRedisPrefix
	}
	if r.cooldown <= 0 {
		r.cooldown = time.Second
	}
	return r
}

// DialRedis returns a client for a redis:// or rediss:// URL with short
// timeouts suited to a limiter that fails open: a slow Redis must not slow
// every request. It does not connect yet.
func DialRedis(rawURL string) (*redis.Client, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	opts.DialTimeout = 250 * time.Millisecond
	opts.ReadTimeout = 250 * time.Millisecond
	opts.WriteTimeout = 250 * time.Millisecond
	opts.MaxRetries = 1
	opts.DialerRetries = 1
	opts.ContextTimeoutEnabled = true
	opts.DisableIdentity = true
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return redis.NewClient(opts), nil
}

// Allow spends one request of key's quota under p.
func (r *Redis) Allow(ctx context.Context, p Policy, key string) (Decision, error) {
	if !p.Enabled() {
		return Decision{Allowed: true, Remaining: 1 << 31}, nil
	}
	if until := r.downUntil.Load(); until != 0 && r.now().UnixNano() < until {
		return Decision{}, fmt.Errorf("%w: cooling down after a failure", ErrUnavailable)
	}
	limit := redis_rate.Limit{Rate: p.Quota, Burst: p.Quota, Period: p.Window}
	res, err := r.lim.Allow(ctx, r.key(p, key), limit)
	if err != nil {
		r.downUntil.Store(r.now().Add(r.cooldown).UnixNano())
		return Decision{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	r.downUntil.Store(0)
	d := Decision{Allowed: res.Allowed > 0, Remaining: res.Remaining, Reset: max(res.ResetAfter, 0)}
	if !d.Allowed {
		d.RetryAfter = max(res.RetryAfter, 0)
	}
	return d, nil
}

// key names the Redis key of (p, key). The policy's quota and window are
// part of it so that instances configured differently never share state.
func (r *Redis) key(p Policy, key string) string {
	sum := sha256.Sum256([]byte(key))
	return fmt.Sprintf("%s%s:%d:%d:%s", r.prefix, p.Name, p.Quota, int64(p.Window/time.Second), hex.EncodeToString(sum[:16]))
}

// libraryKeyPrefix is what redis_rate puts before every key it is given.
const libraryKeyPrefix = "rate:"

// ownKeys is the client handed to redis_rate: it takes the library's own
// "rate:" off every key again, so that keys in Redis start with the
// configured prefix exactly as documented (an operator's KEYS, ACL key
// patterns and cluster hash tags name them by that prefix). The tests list
// the keys in Redis, so a library that changes its prefix is noticed.
type ownKeys struct{ c redis.UniversalClient }

func (o ownKeys) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return o.c.Eval(ctx, script, stripLibraryPrefix(keys), args...)
}

func (o ownKeys) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return o.c.EvalSha(ctx, sha1, stripLibraryPrefix(keys), args...)
}

func (o ownKeys) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return o.c.EvalRO(ctx, script, stripLibraryPrefix(keys), args...)
}

func (o ownKeys) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return o.c.EvalShaRO(ctx, sha1, stripLibraryPrefix(keys), args...)
}

func (o ownKeys) ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd {
	return o.c.ScriptExists(ctx, hashes...)
}

func (o ownKeys) ScriptLoad(ctx context.Context, script string) *redis.StringCmd {
	return o.c.ScriptLoad(ctx, script)
}

func (o ownKeys) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	return o.c.Del(ctx, stripLibraryPrefix(keys)...)
}

func stripLibraryPrefix(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = strings.TrimPrefix(k, libraryKeyPrefix)
	}
	return out
}

// Logger adapts a slog.Logger to go-redis's library logger (redis.SetLogger),
// so that its connection-pool complaints come out as JSON warnings.
type Logger struct{ Log *slog.Logger }

// Printf implements go-redis's logging interface.
func (l Logger) Printf(ctx context.Context, format string, v ...any) {
	l.Log.WarnContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}
