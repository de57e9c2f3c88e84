package calsync_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat/internal/calsync"
	"bokat/internal/clocktest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/telemetry"
)

// polls counts the outcomes a worker reports to its Observer.
type polls struct {
	mu     sync.Mutex
	counts map[string]int
	rows   int
	rounds int
}

func (p *polls) CalendarRound() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rounds++
}

func (p *polls) CalendarPoll(result string, rows int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counts == nil {
		p.counts = map[string]int{}
	}
	p.counts[result]++
	p.rows += rows
}

// TestHeartbeatTellsReadiness: the worker beats at every round, an empty
// one included, so readiness holds while it makes rounds; once it makes
// none for MaxSilence on the injected clock (stuck, or its store gone),
// readiness names it; when Run ends, readiness says it stopped. Each
// poll's outcome reaches the Observer.
func TestHeartbeatTellsReadiness(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	e := newSyncEnv(t, db)
	e.server.set("/cal.ics", readFeed(t, "outlook.ics"))
	e.add(t, "/cal.ics", "")
	hbs := telemetry.NewHeartbeats(e.clock.Now)
	newWorker := func(store *sqlstore.DB, obs calsync.Observer) (*calsync.Worker, calsync.Config) {
		cfg := calsync.Config{Store: sqlstore.Bind[calsync.Tx](store), Fetch: e.server.fetchConfig(), Now: e.clock.Now, Observer: obs}
		cfg.Heartbeat = hbs.Register("calendar-sync", cfg.MaxSilence())
		w, err := calsync.NewWorker(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return w, cfg
	}
	obs := &polls{}
	w, cfg := newWorker(db, obs)
	if got, want := cfg.MaxSilence(), 3*(30*time.Second+calsync.DefaultFetchTimeout); got != want {
		t.Errorf("MaxSilence at the default interval = %s, want %s", got, want)
	}
	ready := func() error { return hbs.Check(context.Background()) }

	if r, err := w.RunOnce(context.Background()); err != nil || r.Changed != 1 {
		t.Fatalf("round = %+v, %v", r, err)
	}
	e.clock.Advance(cfg.MaxSilence() - time.Second)
	if err := ready(); err != nil {
		t.Fatalf("readiness within MaxSilence of a round: %v", err)
	}
	e.clock.Advance(2 * time.Second)
	if err := ready(); err == nil || !strings.Contains(err.Error(), "calendar-sync silent for") {
		t.Fatalf("readiness after MaxSilence without a round = %v, want calendar-sync silent", err)
	}
	// Rounds beat again; one with nothing due is a round too.
	e.clock.Advance(calsync.DefaultInterval)
	if r, err := w.RunOnce(context.Background()); err != nil || r.Polled != 1 || r.Unchanged != 1 {
		t.Fatalf("round = %+v, %v", r, err)
	}
	if r, err := w.RunOnce(context.Background()); err != nil || r.Polled != 0 {
		t.Fatalf("round with nothing due = %+v, %v", r, err)
	}
	e.clock.Advance(cfg.MaxSilence() - time.Second)
	if err := ready(); err != nil {
		t.Fatalf("readiness after an empty round: %v", err)
	}
	obs.mu.Lock()
	if obs.counts["changed"] != 1 || obs.counts["unchanged"] != 1 || obs.counts["failed"] != 0 || obs.rows == 0 || obs.rounds != 3 {
		t.Errorf("observed polls = %v with %d rows in %d rounds, want 1 changed (rows > 0) and 1 unchanged in 3 rounds",
			obs.counts, obs.rows, obs.rounds)
	}
	obs.mu.Unlock()

	// A worker whose store is gone makes no round: no beat.
	gone := sqlstoretest.Reopen(t, db, sqlstoretest.Vault(t))
	lost, _ := newWorker(gone, nil)
	gone.Close()
	if _, err := lost.RunOnce(context.Background()); err == nil {
		t.Fatal("a round on a closed store succeeded")
	}
	e.clock.Advance(cfg.MaxSilence() + time.Second)
	if err := ready(); err == nil || !strings.Contains(err.Error(), "calendar-sync silent for") {
		t.Fatalf("readiness of a worker whose store is gone = %v, want calendar-sync silent", err)
	}

	// Run ends: readiness says the worker stopped.
	w, _ = newWorker(db, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ready(); err == nil || !strings.Contains(err.Error(), "calendar-sync stopped") {
		t.Fatalf("readiness after Run ended = %v, want calendar-sync stopped", err)
	}
}

// TestRunRoundsEveryTick: Run makes a round at start and then one every
// Tick, polling a feed that is due on the worker's clock and, while the
// clock stands, never again; MaxSilence follows the tick. Run ends
// without error when its ctx does.
func TestRunRoundsEveryTick(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	e := newSyncEnv(t, db)
	e.server.set("/cal.ics", readFeed(t, "outlook.ics"))
	e.add(t, "/cal.ics", "")
	obs := &polls{}
	cfg := calsync.Config{Store: sqlstore.Bind[calsync.Tx](db), Fetch: e.server.fetchConfig(), Now: e.clock.Now,
		Observer: obs, Tick: time.Millisecond}
	if got, want := cfg.MaxSilence(), 3*(time.Millisecond+calsync.DefaultFetchTimeout); got != want {
		t.Errorf("MaxSilence with a 1 ms tick = %s, want %s", got, want)
	}
	w, err := calsync.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	clocktest.Wait(t, "five rounds of Run", func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return obs.rounds >= 5
	})
	cancel()
	if err := clocktest.Receive(t, "Run's end", done); err != nil {
		t.Fatalf("Run = %v", err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.counts["changed"] != 1 || obs.counts["unchanged"] != 0 || obs.counts["failed"] != 0 {
		t.Errorf("polls in %d rounds on a standing clock = %v, want the due feed polled once", obs.rounds, obs.counts)
	}
}
