// Package limittest holds the checks every rate limiter must pass, for
// the tests of each.
package limittest

import (
	"context"
	"testing"
	"time"

	"bokat/internal/ratelimit"
)

// PeekContract: Peek tells whether a request is left without spending one
// (l starts with no state for key or key+"-other").
func PeekContract(t *testing.T, l ratelimit.Peeker, key string) {
	t.Helper()
	ctx := context.Background()
	p := ratelimit.Policy{Name: "failures", Quota: 3, Window: time.Minute}
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
