package ratelimit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"bokat/internal/clocktest"
)

// newClock returns a fixed clock the test moves.
func newClock() *clocktest.Clock { return clocktest.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)) }

func TestParseRate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    Policy
		wantErr string
	}{
		{in: "120/min", want: Policy{Name: "x", Quota: 120, Window: time.Minute}},
		{in: "30/m", want: Policy{Name: "x", Quota: 30, Window: time.Minute}},
		{in: "300/minute", want: Policy{Name: "x", Quota: 300, Window: time.Minute}},
		{in: " 5/10s ", want: Policy{Name: "x", Quota: 5, Window: 10 * time.Second}},
		{in: "1000/h", want: Policy{Name: "x", Quota: 1000, Window: time.Hour}},
		{in: "2/s", want: Policy{Name: "x", Quota: 2, Window: time.Second}},
		{in: "2/1m30s", want: Policy{Name: "x", Quota: 2, Window: 90 * time.Second}},
		{in: "off", want: Policy{Name: "x"}},
		{in: "0", want: Policy{Name: "x"}},
		{in: "0/min", want: Policy{Name: "x"}},
		{in: "120", wantErr: "N/period"},
		{in: "many/min", wantErr: "whole number"},
		{in: "-1/min", wantErr: "whole number"},
		{in: "10/fortnight", wantErr: "period"},
		{in: "10/1500ms", wantErr: "whole number of seconds"},
		{in: "10/0s", wantErr: "period"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRate("x", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseRate(%q) err = %v, want it to mention %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseRate(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	p := Policy{Name: "search", Quota: 120, Window: time.Minute}
	if got, want := PolicyHeader(p), `"search";q=120;w=60`; got != want {
		t.Errorf("PolicyHeader = %s, want %s", got, want)
	}
	d := Decision{Remaining: 0, Reset: 11200 * time.Millisecond}
	if got, want := StateHeader(p, d), `"search";r=0;t=12`; got != want {
		t.Errorf("StateHeader = %s, want %s", got, want)
	}
}

func TestMemoryBurstRefusalAndRecovery(t *testing.T) {
	t.Parallel()
	clk := newClock()
	m := NewMemory(MemoryOptions{Now: clk.Now})
	p := Policy{Name: "writes", Quota: 30, Window: time.Minute}
	ctx := context.Background()

	// The whole quota may be spent in one burst.
	for i := 1; i <= 30; i++ {
		d, err := m.Allow(ctx, p, "client-a")
		if err != nil || !d.Allowed {
			t.Fatalf("request %d refused: %+v %v", i, d, err)
		}
		if d.Remaining != 30-i {
			t.Fatalf("request %d: remaining = %d, want %d", i, d.Remaining, 30-i)
		}
	}
	d, _ := m.Allow(ctx, p, "client-a")
	if d.Allowed {
		t.Fatal("request 31 allowed, want refused")
	}
	// One request refills every 2 s; the whole quota in 60 s.
	if d.RetryAfter != 2*time.Second || d.Reset != time.Minute || d.Remaining != 0 {
		t.Fatalf("refusal = %+v, want RetryAfter 2s, Reset 1m, Remaining 0", d)
	}
	// Another key has its own quota.
	if d, _ := m.Allow(ctx, p, "client-b"); !d.Allowed || d.Remaining != 29 {
		t.Fatalf("client-b = %+v, want allowed with 29 left", d)
	}
	// Just before the next token: still refused; at it: allowed once.
	clk.Advance(1999 * time.Millisecond)
	if d, _ := m.Allow(ctx, p, "client-a"); d.Allowed {
		t.Fatal("allowed before Retry-After")
	}
	clk.Advance(time.Millisecond)
	if d, _ := m.Allow(ctx, p, "client-a"); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("after Retry-After = %+v, want allowed with 0 left", d)
	}
	if d, _ := m.Allow(ctx, p, "client-a"); d.Allowed {
		t.Fatal("second request after one refill allowed")
	}
	// After a full window the whole burst is back.
	clk.Advance(time.Minute)
	for i := 0; i < 30; i++ {
		if d, _ := m.Allow(ctx, p, "client-a"); !d.Allowed {
			t.Fatalf("after a full window, request %d refused", i+1)
		}
	}
}

func TestMemoryPoliciesAreIndependent(t *testing.T) {
	t.Parallel()
	clk := newClock()
	m := NewMemory(MemoryOptions{Now: clk.Now})
	search := Policy{Name: "search", Quota: 2, Window: time.Minute}
	reads := Policy{Name: "reads", Quota: 3, Window: time.Minute}
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		m.Allow(ctx, search, "k")
	}
	if d, _ := m.Allow(ctx, search, "k"); d.Allowed {
		t.Fatal("search quota not enforced")
	}
	if d, _ := m.Allow(ctx, reads, "k"); !d.Allowed || d.Remaining != 2 {
		t.Fatalf("reads after search exhausted = %+v, want allowed with 2 left", d)
	}
	if d, _ := m.Allow(ctx, Policy{Name: "off"}, "k"); !d.Allowed {
		t.Fatal("a disabled policy refused")
	}
}

func TestMemoryForgetsIdleKeysAndStaysBounded(t *testing.T) {
	t.Parallel()
	clk := newClock()
	m := NewMemory(MemoryOptions{Now: clk.Now, MaxKeys: 100})
	p := Policy{Name: "reads", Quota: 5, Window: time.Minute}
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		m.Allow(ctx, p, fmt.Sprintf("ip-%d", i))
	}
	if m.Len() != 50 {
		t.Fatalf("Len = %d, want 50", m.Len())
	}
	// Once every bucket has refilled, the next call forgets them all.
	clk.Advance(time.Minute)
	m.Allow(ctx, p, "fresh")
	if m.Len() != 1 {
		t.Fatalf("after a window of idleness Len = %d, want 1", m.Len())
	}
	// A flood of distinct keys never grows past MaxKeys.
	for i := 0; i < 1000; i++ {
		m.Allow(ctx, p, fmt.Sprintf("flood-%d", i))
	}
	if m.Len() != 100 || m.Evicted() != 901 {
		t.Fatalf("after a flood Len = %d, Evicted = %d; want 100 and 901", m.Len(), m.Evicted())
	}
	// A key seen recently survives the idle sweep while older ones go.
	clk.Advance(30 * time.Second)
	for i := 0; i < 5; i++ {
		m.Allow(ctx, p, "busy")
	}
	clk.Advance(31 * time.Second)
	if d, _ := m.Allow(ctx, p, "busy"); d.Allowed && d.Remaining > 3 {
		t.Fatalf("busy key lost its state: %+v", d)
	}
	if m.Len() != 1 {
		t.Fatalf("Len = %d, want only the busy key", m.Len())
	}
}

// TestHeadersAreWhatSprintfWrites keeps the header renderers, written
// without fmt, equal to the format strings they replaced.
func TestHeadersAreWhatSprintfWrites(t *testing.T) {
	for _, p := range []Policy{
		{Name: "search", Quota: 120, Window: time.Minute},
		{Name: "w\"ri\\tes\n✓", Quota: 1, Window: 1500 * time.Millisecond},
		{Name: "", Quota: 0, Window: 0},
		{Name: "big", Quota: 1 << 40, Window: 48 * time.Hour},
	} {
		if got, want := PolicyHeader(p), fmt.Sprintf("%q;q=%d;w=%d", p.Name, p.Quota, int64(p.Window/time.Second)); got != want {
			t.Errorf("PolicyHeader(%+v) = %s, want %s", p, got, want)
		}
		for _, d := range []Decision{{Remaining: 119, Reset: 500 * time.Millisecond}, {Remaining: -3, Reset: -time.Second},
			{Remaining: 0, Reset: 61 * time.Second}, {Remaining: 7, Reset: 0}} {
			want := fmt.Sprintf("%q;r=%d;t=%d", p.Name, max(d.Remaining, 0), CeilSeconds(d.Reset))
			if got := StateHeader(p, d); got != want {
				t.Errorf("StateHeader(%+v, %+v) = %s, want %s", p, d, got, want)
			}
		}
	}
}
