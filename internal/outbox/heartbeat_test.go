package outbox_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
)

type countingHeartbeat struct{ beats, stops atomic.Int32 }

func (h *countingHeartbeat) Beat() { h.beats.Add(1) }
func (h *countingHeartbeat) Stop() { h.stops.Add(1) }

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
	disp := outbox.NewDispatcher(db, sender, outbox.DispatcherConfig{Interval: 5 * time.Millisecond, Heartbeat: dispHB})
	relay := outbox.NewRelay(sqlstore.Bind[outbox.Tx](db), outbox.RelayConfig{Interval: 5 * time.Millisecond, Heartbeat: relayHB})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- relay.Run(ctx) }()
	go func() { done <- disp.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for relayHB.beats.Load() < 3 || dispHB.beats.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("beats: relay %d, dispatcher %d", relayHB.beats.Load(), dispHB.beats.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	db.Close() // the store goes away: no more beats
	time.Sleep(50 * time.Millisecond)
	r, d := relayHB.beats.Load(), dispHB.beats.Load()
	time.Sleep(100 * time.Millisecond)
	if relayHB.beats.Load() != r || dispHB.beats.Load() != d {
		t.Errorf("loops kept beating without a store")
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
