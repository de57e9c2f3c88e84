package outbox_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
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

// benchRig is one serve process's webhook half with its production
// defaults (relay every 100ms, dispatcher woken by the relay, 16 deliveries
// in flight) and a local receiver noting when each event arrives.
type benchRig struct {
	db       *sqlstore.DB
	mu       sync.Mutex
	arrived  map[string]time.Time // outbox id -> arrival
	received chan struct{}
}

func newBenchRig(b *testing.B, engine sqlstore.Engine) *benchRig {
	b.Helper()
	r := &benchRig{db: sqlstoretest.Open(b, engine), arrived: map[string]time.Time{}, received: make(chan struct{}, 1<<16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev struct {
			OutboxID string `json:"outbox_id"`
		}
		if err := json.NewDecoder(req.Body).Decode(&ev); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		now := time.Now()
		r.mu.Lock()
		if _, dup := r.arrived[ev.OutboxID]; !dup {
			r.arrived[ev.OutboxID] = now
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		r.received <- struct{}{}
	}))
	b.Cleanup(srv.Close)
	key := make([]byte, webhook.KeySize)
	rand.Read(key)
	keys, _ := webhook.NewKeyring(key)
	guard := webhook.NewGuard(webhooktest.NewResolver(), true)
	svc := webhook.NewService(webhook.ServiceConfig{Store: sqlstore.Bind[webhook.Tx](r.db), Guard: guard, Keys: keys})
	if _, _, err := svc.RegisterEndpoint(context.Background(), acme, srv.URL+"/hook", []bokat.EventType{bokat.EventBookingConfirmed}); err != nil {
		b.Fatal(err)
	}
	disp := outbox.NewDispatcher(r.db, webhook.NewSender(webhook.SenderConfig{Guard: guard, Keys: keys}), outbox.DispatcherConfig{})
	relay := outbox.NewRelay(sqlstore.Bind[outbox.Tx](r.db), outbox.RelayConfig{OnRelayed: disp.Kick})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { relay.Run(ctx) })
	wg.Go(func() { disp.Run(ctx) })
	b.Cleanup(func() { cancel(); wg.Wait() })
	return r
}

// report adds deliveries/s and the commit-to-delivery lag percentiles.
func (r *benchRig) report(b *testing.B, committed map[string]time.Time, elapsed time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lags := make([]float64, 0, len(committed))
	for id, at := range committed {
		lags = append(lags, float64(r.arrived[id].Sub(at).Microseconds())/1000)
	}
	slices.Sort(lags)
	pct := func(p float64) float64 { return lags[min(len(lags)-1, int(p*float64(len(lags))))] }
	b.ReportMetric(float64(len(committed))/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(pct(0.50), "lag-p50-ms")
	b.ReportMetric(pct(0.99), "lag-p99-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkBurst commits b.N events at once (one transaction each, from 4
// writers, as concurrent confirmations would) and measures how fast they
// reach a local receiver.
func BenchmarkBurst(b *testing.B) {
	for _, engine := range sqlstoretest.Engines() {
		b.Run(string(engine), func(b *testing.B) {
			r := newBenchRig(b, engine)
			committed := make(map[string]time.Time, b.N)
			var mu sync.Mutex
			b.ResetTimer()
			start := time.Now()
			var writers sync.WaitGroup
			for w := range 4 {
				writers.Go(func() {
					for i := w; i < b.N; i += 4 {
						ev := insertEvent(b, r.db, acme, fmt.Sprintf("bk_%d", i), bokat.EventBookingConfirmed, time.Now())
						at := time.Now()
						mu.Lock()
						committed[ev.ID] = at
						mu.Unlock()
					}
				})
			}
			for range b.N {
				<-r.received
			}
			elapsed := time.Since(start)
			b.StopTimer()
			writers.Wait()
			r.report(b, committed, elapsed)
		})
	}
}

// BenchmarkSteady commits one event every 10ms and measures the lag from
// commit to delivery.
func BenchmarkSteady(b *testing.B) {
	for _, engine := range sqlstoretest.Engines() {
		b.Run(string(engine), func(b *testing.B) {
			r := newBenchRig(b, engine)
			committed := make(map[string]time.Time, b.N)
			b.ResetTimer()
			start := time.Now()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for i := range b.N {
				<-tick.C
				ev := insertEvent(b, r.db, acme, fmt.Sprintf("bk_%d", i), bokat.EventBookingConfirmed, time.Now())
				committed[ev.ID] = time.Now()
			}
			for range b.N {
				<-r.received
			}
			elapsed := time.Since(start)
			b.StopTimer()
			r.report(b, committed, elapsed)
		})
	}
}
