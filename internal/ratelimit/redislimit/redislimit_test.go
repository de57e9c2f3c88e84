package redislimit

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"bokat/internal/clocktest"
	"bokat/internal/ratelimit"
	"bokat/internal/ratelimit/limittest"
	"bokat/internal/ratelimit/redistest"
)

func newClock() *clocktest.Clock { return clocktest.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)) }

// redisURL is the Redis server of the tests.
func redisURL() string { return redistest.URL() }

// testRedis returns a client on the test server and a prefix unique to the
// test; it deletes the test's keys when done.
func testRedis(tb testing.TB) (*redis.Client, string) {
	tb.Helper()
	redistest.Require(tb)
	c, err := Dial(redisURL())
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		tb.Fatalf("the rate-limit tests need Redis at %s (set BOKAT_TEST_REDIS_URL): %v", redisURL(), err)
	}
	prefix := "bokat-test:" + strings.ToLower(rand.Text()[:12]) + ":"
	tb.Cleanup(func() {
		keys, _ := c.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
		c.Close()
	})
	return c, prefix
}

// The Redis limiter answers exactly as the in-process one, on the injected
// clock: the test freezes and moves it, so the machine's speed decides
// nothing.
func TestRedisBurstRefusalAndRecovery(t *testing.T) {
	t.Parallel()
	c, prefix := testRedis(t)
	clk := newClock()
	l := New(c, Options{Prefix: prefix, Now: clk.Now})
	p := ratelimit.Policy{Name: "writes", Quota: 30, Window: time.Minute}
	ctx := context.Background()

	// The whole quota may be spent in one burst.
	for i := 1; i <= 30; i++ {
		d, err := l.Allow(ctx, p, "client-a")
		if err != nil || !d.Allowed || d.Remaining != 30-i || d.Reset != time.Duration(i)*2*time.Second {
			t.Fatalf("request %d = %+v, %v; want allowed with %d left, Reset %v", i, d, err, 30-i, time.Duration(i)*2*time.Second)
		}
	}
	d, err := l.Allow(ctx, p, "client-a")
	if err != nil || d.Allowed {
		t.Fatalf("request 31 = %+v, %v; want refused", d, err)
	}
	// One request refills every 2 s; the whole quota in 60 s.
	if d.RetryAfter != 2*time.Second || d.Reset != time.Minute || d.Remaining != 0 {
		t.Fatalf("refusal = %+v, want RetryAfter 2s, Reset 1m, Remaining 0", d)
	}
	if d, _ := l.Allow(ctx, p, "client-b"); !d.Allowed || d.Remaining != 29 {
		t.Fatalf("client-b = %+v, want allowed with 29 left", d)
	}
	// Just before the next token: still refused; at it: allowed once.
	clk.Advance(1999 * time.Millisecond)
	if d, err := l.Allow(ctx, p, "client-a"); err != nil || d.Allowed || d.RetryAfter != time.Millisecond {
		t.Fatalf("1 ms before Retry-After = %+v, %v; want refused with RetryAfter 1ms", d, err)
	}
	clk.Advance(time.Millisecond)
	if d, err := l.Allow(ctx, p, "client-a"); err != nil || !d.Allowed || d.Remaining != 0 {
		t.Fatalf("after Retry-After = %+v, %v; want allowed with 0 left", d, err)
	}
	if d, _ := l.Allow(ctx, p, "client-a"); d.Allowed {
		t.Fatal("two requests allowed after one refill interval")
	}
	// After a full window the whole burst is back.
	clk.Advance(time.Minute)
	for i := 0; i < 30; i++ {
		if d, err := l.Allow(ctx, p, "client-a"); err != nil || !d.Allowed {
			t.Fatalf("after a full window, request %d = %+v, %v; want allowed", i+1, d, err)
		}
	}
	// Redis holds only digests of the keys, each kept at most a window.
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys = %v, %v; want 2", keys, err)
	}
	for _, k := range keys {
		if strings.Contains(k, "client-") {
			t.Errorf("Redis key %q holds the caller's key in clear", k)
		}
		if ttl := c.PTTL(ctx, k).Val(); ttl <= 0 || ttl > p.Window {
			t.Errorf("key %q TTL = %v, want it to expire within the window", k, ttl)
		}
	}
}

// A quota that does not divide its window still allows exactly the quota
// in a burst (the script's integer microseconds lose nothing that counts).
func TestRedisQuotaThatDoesNotDivideTheWindow(t *testing.T) {
	t.Parallel()
	c, prefix := testRedis(t)
	clk := newClock()
	l := New(c, Options{Prefix: prefix, Now: clk.Now})
	p := ratelimit.Policy{Name: "odd", Quota: 7, Window: time.Minute}
	ctx := context.Background()
	for i := 1; i <= 7; i++ {
		if d, err := l.Allow(ctx, p, "k"); err != nil || !d.Allowed || d.Remaining != 7-i {
			t.Fatalf("request %d = %+v, %v; want allowed with %d left", i, d, err, 7-i)
		}
	}
	if d, err := l.Allow(ctx, p, "k"); err != nil || d.Allowed {
		t.Fatalf("request 8 = %+v, %v; want refused", d, err)
	}
}

// The configured prefix starts every key in Redis: nothing of the
// limiter's library is put before it.
func TestRedisKeysStartWithThePrefix(t *testing.T) {
	t.Parallel()
	c, prefix := testRedis(t)
	l := New(c, Options{Prefix: prefix, Now: newClock().Now})
	ctx := context.Background()
	for _, p := range []ratelimit.Policy{{Name: "reads", Quota: 5, Window: time.Minute}, {Name: "writes", Quota: 2, Window: time.Minute}} {
		if _, err := l.Allow(ctx, p, "caller"); err != nil {
			t.Fatal(err)
		}
	}
	// Every key naming this test's prefix anywhere.
	keys, err := c.Keys(ctx, "*"+prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("keys = %v, want 2", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix+"reads:5:60:") && !strings.HasPrefix(k, prefix+"writes:2:60:") {
			t.Errorf("key %q does not start with the prefix %q and the policy", k, prefix)
		}
	}
}

func TestRedisInstancesShareOneQuota(t *testing.T) {
	t.Parallel()
	c1, prefix := testRedis(t)
	c2, err := Dial(redisURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	// One frozen clock: no request is refilled while the 30 race, however
	// slow the machine.
	clk := newClock()
	a, b := New(c1, Options{Prefix: prefix, Now: clk.Now}), New(c2, Options{Prefix: prefix, Now: clk.Now})
	p := ratelimit.Policy{Name: "search", Quota: 10, Window: time.Minute}
	ctx := context.Background()
	allowed := 0
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < 30; i++ {
		l := a
		if i%2 == 1 {
			l = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := l.Allow(ctx, p, "shared-principal")
			if err != nil {
				t.Error(err)
				return
			}
			if d.Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != 10 {
		t.Fatalf("%d of 30 requests through two instances were allowed, want exactly the quota of 10", allowed)
	}
}

// After a failure the limiter skips Redis for the cool-down, on the
// injected clock: the test counts the connections it tries instead of
// timing the calls.
func TestRedisDownReportsUnavailableQuickly(t *testing.T) {
	t.Parallel()
	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := Dial("redis://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int64
	dial := c.Options().Dialer
	c.Options().Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	defer c.Close()
	clk := newClock()
	l := New(c, Options{Cooldown: time.Minute, Now: clk.Now})
	p := ratelimit.Policy{Name: "reads", Quota: 5, Window: time.Minute}
	_, err = l.Allow(context.Background(), p, "k")
	if !errors.Is(err, ratelimit.ErrUnavailable) {
		t.Fatalf("err = %v, want ratelimit.ErrUnavailable", err)
	}
	tried := dials.Load()
	if tried == 0 {
		t.Fatal("the first call dialled nothing; the test counts nothing")
	}
	clk.Advance(time.Minute - time.Nanosecond)
	for _, call := range []func() (ratelimit.Decision, error){
		func() (ratelimit.Decision, error) { return l.Allow(context.Background(), p, "k") },
		func() (ratelimit.Decision, error) { return l.Peek(context.Background(), p, "k") },
	} {
		_, err = call()
		if !errors.Is(err, ratelimit.ErrUnavailable) || !strings.Contains(err.Error(), "cooling down") {
			t.Fatalf("a call within the cool-down: err = %v, want the cool-down", err)
		}
	}
	if n := dials.Load(); n != tried {
		t.Fatalf("calls within the cool-down dialled %d times; they must not touch the network", n-tried)
	}
	// Once the cool-down is over, Redis is tried again.
	clk.Advance(time.Nanosecond)
	if _, err = l.Allow(context.Background(), p, "k"); !errors.Is(err, ratelimit.ErrUnavailable) || strings.Contains(err.Error(), "cooling down") {
		t.Fatalf("after the cool-down err = %v, want a fresh failure", err)
	}
	if dials.Load() == tried {
		t.Fatal("after the cool-down Redis was not tried again")
	}
}

// Dial keeps a limiter's short time-outs unless the URL sets its own
// (a test on a busy machine, or an operator, may want patience).
func TestDialTimeouts(t *testing.T) {
	t.Parallel()
	c, err := Dial("redis://127.0.0.1:6379/0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if o := c.Options(); o.DialTimeout != 250*time.Millisecond || o.ReadTimeout != 250*time.Millisecond || o.WriteTimeout != 250*time.Millisecond || o.MaxRetries != 1 {
		t.Errorf("defaults: dial %v read %v write %v retries %d; want 250ms each and 1 retry", o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries)
	}
	p, err := Dial("redis://127.0.0.1:6379/0?dial_timeout=3s&read_timeout=10s&write_timeout=11s&max_retries=-1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if o := p.Options(); o.DialTimeout != 3*time.Second || o.ReadTimeout != 10*time.Second || o.WriteTimeout != 11*time.Second || o.MaxRetries != 0 {
		t.Errorf("from the URL: dial %v read %v write %v retries %d; want 3s, 10s, 11s and none (-1 is kept as 0)", o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries)
	}
}

func TestDialRejectsABadURL(t *testing.T) {
	t.Parallel()
	if _, err := Dial("http://127.0.0.1:6379"); err == nil {
		t.Fatal("an http:// URL was accepted")
	}
}

// BenchmarkRedisAllow measures one decision against the local Redis server
// (a round trip running the GCRA script).
func BenchmarkRedisAllow(b *testing.B) {
	c, prefix := testRedis(b)
	l := New(c, Options{Prefix: prefix})
	p := ratelimit.Policy{Name: "reads", Quota: 1 << 30, Window: time.Minute}
	ctx := context.Background()
	var n atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Allow(ctx, p, "principal:"+strconv.FormatUint(n.Add(1)%100, 10)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestRedisPeek(t *testing.T) {
	t.Parallel()
	c, prefix := testRedis(t)
	clk := newClock()
	l := New(c, Options{Prefix: prefix, Now: clk.Now})
	limittest.PeekContract(t, l, "k")
	clk.Advance(20 * time.Second)
	if d, _ := l.Peek(context.Background(), ratelimit.Policy{Name: "failures", Quota: 3, Window: time.Minute}, "k"); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("after one refill interval = %+v, want one request left", d)
	}
}
