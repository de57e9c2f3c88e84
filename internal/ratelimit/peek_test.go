package ratelimit

import (
	"context"
	"testing"
	"time"
)

// peekContract: Peek tells whether a request is left without spending one,
// on both limiters.
func peekContract(t *testing.T, l Peeker, key string) {
	t.Helper()
	ctx := context.Background()
	p := Policy{Name: "failures", Quota: 3, Window: time.Minute}
	for i := 0; i < 5; i++ {
		d, err := l.Peek(ctx, p, key)
		if err != nil || !d.Allowed || d.Remaining != 3 {
			t.Fatalf("peek %d on a fresh key = %+v, %v; want allowed with 3 left", i, d, err)
		}
	}
	for i := 0; i < 3; i++ {
		if d, err := l.Allow(ctx, p, key); err != nil || !d.Allowed {
			t.Fatalf("allow %d = %+v, %v", i, d, err)
		}
	}
	d, err := l.Peek(ctx, p, key)
	if err != nil || d.Allowed || d.Remaining != 0 || d.RetryAfter != 20*time.Second || d.Reset != time.Minute {
		t.Fatalf("peek after the quota = %+v, %v; want refused with RetryAfter 20s, Reset 1m", d, err)
	}
	if d, _ := l.Peek(ctx, p, key+"-other"); !d.Allowed {
		t.Fatal("another key was refused")
	}
}

func TestMemoryPeek(t *testing.T) {
	t.Parallel()
	clk := newClock()
	m := NewMemory(MemoryOptions{Now: clk.Now})
	peekContract(t, m, "k")
	clk.Advance(20 * time.Second)
	if d, _ := m.Peek(context.Background(), Policy{Name: "failures", Quota: 3, Window: time.Minute}, "k"); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("after one refill interval = %+v, want one request left", d)
	}
}

func TestRedisPeek(t *testing.T) {
	t.Parallel()
	c, prefix := testRedis(t)
	clk := newClock()
	l := NewRedis(c, RedisOptions{Prefix: prefix, Now: clk.Now})
	peekContract(t, l, "k")
	clk.Advance(20 * time.Second)
	if d, _ := l.Peek(context.Background(), Policy{Name: "failures", Quota: 3, Window: time.Minute}, "k"); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("after one refill interval = %+v, want one request left", d)
	}
}
