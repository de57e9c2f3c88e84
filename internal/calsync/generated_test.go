package calsync_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"bokat/internal/calsync"
	"bokat/internal/calsync/calsynctest"
	"bokat/internal/clocktest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
)

// TestGeneratedFeeds: the load runs' generated feeds are what they claim
// to be: 200 events that parse without a skipped or partial one, the same
// bytes for the same feed, busy times in the horizon for each, and a new
// version that changes the body.
func TestGeneratedFeeds(t *testing.T) {
	t.Parallel()
	to := windowFrom.Add(37 * 24 * time.Hour)
	for n := 1; n <= 50; n++ {
		body := calsynctest.Feed(n, windowFrom, 0)
		if !bytes.Equal(body, calsynctest.Feed(n, windowFrom, 0)) || bytes.Equal(body, calsynctest.Feed(n, windowFrom, 1)) {
			t.Fatalf("feed %d: not deterministic, or a new version leaves it as it was", n)
		}
		p, err := calsync.Parse(body, calsync.ParseOptions{From: windowFrom, To: to})
		if err != nil {
			t.Fatalf("feed %d: %v", n, err)
		}
		if p.Events < calsynctest.Events || p.Skipped != 0 || p.Partial != 0 || len(p.Busy) < 20 {
			t.Fatalf("feed %d: %d events, %d skipped, %d partial, %d busy times", n, p.Events, p.Skipped, p.Partial, len(p.Busy))
		}
	}
}

// BenchmarkParseGeneratedFeed parses one generated feed of 200 events over
// a 30-day horizon plus the week ahead, as a changed feed's poll does.
func BenchmarkParseGeneratedFeed(b *testing.B) {
	body := calsynctest.Feed(7, windowFrom, 0)
	to := windowFrom.Add(37 * 24 * time.Hour)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var busy int
	for b.Loop() {
		p, err := calsync.Parse(body, calsync.ParseOptions{From: windowFrom, To: to})
		if err != nil {
			b.Fatal(err)
		}
		busy = len(p.Busy)
	}
	b.ReportMetric(float64(busy), "busy/feed")
}

// BenchmarkRound polls feeds of 200 events from a real local HTTP server
// on SQLite: "changed" is a first round (every body parsed and its busy
// times written), "unchanged" a round of 304 answers. It reports the
// calendar rows written per feed.
func BenchmarkRound(b *testing.B) {
	const feeds = 200
	for _, mode := range []string{"changed", "unchanged"} {
		b.Run(mode, func(b *testing.B) {
			srv := calsynctest.NewServer(windowFrom)
			hs := httptest.NewServer(srv)
			b.Cleanup(hs.Close)
			var rows, polled int
			for b.Loop() {
				b.StopTimer()
				db := sqlstoretest.Open(b, sqlstore.SQLite)
				clock := clocktest.New(windowFrom)
				guard := webhook.NewGuard(webhooktest.NewResolver(), true)
				store := sqlstore.Bind[calsync.Tx](db)
				add := calsync.NewFeeds(store, guard, clock.Now)
				for i := 1; i <= feeds; i++ {
					id := fmt.Sprintf("prv_gen_%05d", i)
					insertProvider(b, db, id, 30)
					if _, err := add.Add(context.Background(), id, hs.URL+"/feeds/"+id+".ics", "", calsync.SourceSupply); err != nil {
						b.Fatal(err)
					}
				}
				w, err := calsync.NewWorker(calsync.Config{Store: store, Fetch: calsync.FetchConfig{Guard: guard}, Now: clock.Now})
				if err != nil {
					b.Fatal(err)
				}
				if mode == "unchanged" {
					if _, err := w.RunOnce(context.Background()); err != nil {
						b.Fatal(err)
					}
					clock.Advance(calsync.DefaultInterval)
				}
				b.StartTimer()
				r, err := w.RunOnce(context.Background())
				b.StopTimer()
				if err != nil || r.Polled != feeds || r.Failed != 0 {
					b.Fatalf("round = %+v, %v", r, err)
				}
				rows, polled = rows+r.Rows, polled+r.Polled
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(rows)/float64(polled), "rows/feed")
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(polled), "ns/feed")
		})
	}
}

var _ http.Handler = (*calsynctest.Server)(nil)
