package outbox_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bokat"
	"bokat/internal/clocktest"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
	"bokat/webhookverify"
)

// countingDeliverer counts the attempts one worker made.
type countingDeliverer struct {
	next outbox.Deliverer
	n    atomic.Int64
}

func (c *countingDeliverer) Deliver(ctx context.Context, d outbox.ClaimedDelivery) outbox.Outcome {
	c.n.Add(1)
	return c.next.Deliver(ctx, d)
}

// process is one serve process's webhook half: its own connection pool, a
// relay and a dispatcher.
type process struct {
	db      *sqlstore.DB
	counter *countingDeliverer
	stop    func()
}

func startProcess(tb testing.TB, url string, keys *webhook.Keyring, interval time.Duration) *process {
	tb.Helper()
	db, err := sqlstore.Open(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	sender := webhook.NewSender(webhook.SenderConfig{Guard: webhook.NewGuard(webhooktest.NewResolver(), true), Keys: keys})
	counter := &countingDeliverer{next: sender}
	disp := outbox.NewDispatcher(db, counter, outbox.DispatcherConfig{Concurrency: 8, Interval: interval})
	relay := outbox.NewRelay(sqlstore.Bind[outbox.Tx](db), outbox.RelayConfig{Interval: interval, OnRelayed: disp.Kick})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { relay.Run(ctx) })
	wg.Go(func() { disp.Run(ctx) })
	p := &process{db: db, counter: counter}
	var once sync.Once
	p.stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			db.Close()
		})
	}
	tb.Cleanup(p.stop)
	return p
}

// TestTwoWorkersDeliverABurstExactlyOnce runs two "processes", each with its
// own connection pool, relay and dispatcher, on one database, and checks
// that a burst of 200 events reaches the receiver exactly once each.
func TestTwoWorkersDeliverABurstExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			const events = 200
			url := sqlstoretest.URL(t, engine)
			key := make([]byte, webhook.KeySize)
			rand.Read(key)
			keys, _ := webhook.NewKeyring(key)
			a := startProcess(t, url, keys, 20*time.Millisecond)
			b := startProcess(t, url, keys, 20*time.Millisecond)

			rc := webhooktest.NewReceiver(t, nil)
			svc := webhook.NewService(webhook.ServiceConfig{Store: sqlstore.Bind[webhook.Tx](a.db), Guard: webhook.NewGuard(webhooktest.NewResolver(), true), Keys: keys})
			_, secret, err := svc.RegisterEndpoint(context.Background(), acme, rc.URL, []bokat.EventType{bokat.EventBookingConfirmed})
			if err != nil {
				t.Fatal(err)
			}
			var writers sync.WaitGroup
			for w := range 4 {
				writers.Go(func() {
					db := []*sqlstore.DB{a.db, b.db}[w%2]
					for i := range events / 4 {
						insertEvent(t, db, acme, fmt.Sprintf("bk_%d_%d", w, i), bokat.EventBookingConfirmed, time.Now())
					}
				})
			}
			writers.Wait()
			rc.WaitFor(t, events)
			clocktest.Wait(t, "every delivery recorded", func() bool { return delivered(t, a.db) >= events })
			a.stop()
			b.stop()

			got := rc.Deliveries()
			perID := map[string]int{}
			v, _ := webhookverify.New(secret)
			for _, d := range got {
				id, err := v.Verify(d.Header, d.Body)
				if err != nil {
					t.Fatalf("a delivery does not verify: %v", err)
				}
				perID[id]++
			}
			for id, n := range perID {
				if n != 1 {
					t.Errorf("Webhook-Id %s arrived %d times", id, n)
				}
			}
			if len(got) != events || len(perID) != events {
				t.Fatalf("receiver got %d requests with %d distinct Webhook-Ids, want %d and %d", len(got), len(perID), events, events)
			}
			if n := a.counter.n.Load() + b.counter.n.Load(); n != events {
				t.Fatalf("workers made %d attempts, want %d", n, events)
			}
			t.Logf("%s: worker A delivered %d, worker B %d", engine, a.counter.n.Load(), b.counter.n.Load())
		})
	}
}

func delivered(tb testing.TB, db *sqlstore.DB) int {
	tb.Helper()
	var n int
	if err := db.R().QueryRowContext(context.Background(),
		`SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'delivered'`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}
