package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"bokat/internal/clocktest"
	"bokat/internal/ratelimit"
	"bokat/internal/ratelimit/limittest"
)

func TestMemoryPeek(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	m := ratelimit.NewMemory(ratelimit.MemoryOptions{Now: clk.Now})
	limittest.PeekContract(t, m, "k")
	clk.Advance(20 * time.Second)
	if d, _ := m.Peek(context.Background(), ratelimit.Policy{Name: "failures", Quota: 3, Window: time.Minute}, "k"); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("after one refill interval = %+v, want one request left", d)
	}
}
