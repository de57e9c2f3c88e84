package outbox_test

import (
	"maps"
	"net/http"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
)

// countingOutcomes records what the dispatcher reported.
type countingOutcomes struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingOutcomes) WebhookDelivery(result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[result]++
}

// TestDispatcherReportsEveryRecordedAttempt checks that each recorded attempt
// is counted once under its result, so the operator's delivery counter
// matches the attempts table.
func TestDispatcherReportsEveryRecordedAttempt(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		out := &countingOutcomes{n: map[string]int{}}
		f := newFixture(t, db, func(dc *outbox.DispatcherConfig, _ *webhook.SenderConfig) {
			dc.Outcomes = out
			dc.Schedule = []time.Duration{time.Second}
		})
		ok := webhooktest.NewReceiver(t, nil)
		down := webhooktest.NewReceiver(t, func(int, *http.Request) int { return http.StatusServiceUnavailable })
		f.endpoint(acme, ok.URL, bokat.EventBookingConfirmed)
		f.endpoint(acme, down.URL, bokat.EventBookingConfirmed)
		f.event(acme, "bk_1", bokat.EventBookingConfirmed)
		f.pump()
		f.clock.Advance(time.Second)
		f.pump()
		want := map[string]int{"delivered": 1, "retry": 1, "failed": 1}
		if !maps.Equal(out.n, want) {
			t.Fatalf("reported %v, want %v", out.n, want)
		}
	})
}
