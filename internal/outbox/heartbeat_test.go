package outbox_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"bokat/internal/clocktest"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
)

type countingHeartbeat struct{ beats, stops atomic.Int32 }

func (h *countingHeartbeat) Beat() { h.beats.Add(1) }
func (h *countingHeartbeat) Stop() { h.stops.Add(1) }

// failureCounter is a log handler counting a loop's logged failures.
type failureCounter struct{ n atomic.Int32 }

func (f *failureCounter) Enabled(context.Context, slog.Level) bool { return true }
func (f *failureCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		f.n.Add(1)
	}
	return nil
}
func (f *failureCounter) WithAttrs([]slog.Attr) slog.Handler { return f }
func (f *failureCounter) WithGroup(string) slog.Handler      { return f }

// The loops show readiness they are alive only while their passes reach
// the store, and stop their heartbeat when they end.
func TestLoopsBeatWhileTheyReachTheStore(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	relayHB, dispHB := &countingHeartbeat{}, &countingHeartbeat{}
	keys, err := webhook.NewKeyring(make([]byte, webhook.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	sender := webhook.NewSender(webhook.SenderConfig{Guard: webhook.NewGuard(nil, true), Keys: keys})
	relayFailures, dispFailures := &failureCounter{}, &failureCounter{}
	// The loops wait 5 ms after a failed pass instead of the default 2 s:
	// the test counts failed passes, so only their number matters.
	disp := outbox.NewDispatcher(db, sender, outbox.DispatcherConfig{Interval: 5 * time.Millisecond, ErrorBackoff: 5 * time.Millisecond,
		Heartbeat: dispHB, Logger: slog.New(dispFailures)})
	relay := outbox.NewRelay(sqlstore.Bind[outbox.Tx](db), outbox.RelayConfig{Interval: 5 * time.Millisecond, ErrorBackoff: 5 * time.Millisecond,
		Heartbeat: relayHB, Logger: slog.New(relayFailures)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- relay.Run(ctx) }()
	go func() { done <- disp.Run(ctx) }()
	clocktest.Wait(t, "three beats of each loop", func() bool { return relayHB.beats.Load() >= 3 && dispHB.beats.Load() >= 3 })
	db.Close() // the store goes away: no more beats
	// Each loop runs one pass at a time, so once it has logged a failed
	// pass no later pass can reach the store. Between its first failure
	// and its third, a whole failed pass ran, whether a loop beats before
	// or after it logs: counted by passes, not by time, so a slow machine
	// cannot make a late beat look like a beat without a store.
	clocktest.Wait(t, "a failed pass of each loop", func() bool { return relayFailures.n.Load() >= 1 && dispFailures.n.Load() >= 1 })
	r, d := relayHB.beats.Load(), dispHB.beats.Load()
	clocktest.Wait(t, "two more failed passes of each loop", func() bool { return relayFailures.n.Load() >= 3 && dispFailures.n.Load() >= 3 })
	if relayHB.beats.Load() != r || dispHB.beats.Load() != d {
		t.Errorf("loops kept beating without a store: relay %d → %d, dispatcher %d → %d", r, relayHB.beats.Load(), d, dispHB.beats.Load())
	}
	cancel()
	for range 2 {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v", err)
		}
	}
	if relayHB.stops.Load() != 1 || dispHB.stops.Load() != 1 {
		t.Errorf("stops: relay %d, dispatcher %d", relayHB.stops.Load(), dispHB.stops.Load())
	}
}
