package telemetry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/clocktest"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/telemetry"
)

func TestHeartbeats(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	hb := telemetry.NewHeartbeats(clk.Now)
	if err := hb.Check(context.Background()); err != nil {
		t.Fatalf("no workers: %v", err)
	}
	notify := hb.Register("notify", 30*time.Second)
	relay := hb.Register("outbox", time.Minute)
	cases := []struct {
		name    string
		step    func()
		wantErr string
	}{
		{"fresh", func() {}, ""},
		{"quiet within the limit", func() { clk.Advance(30 * time.Second) }, ""},
		{"one silent too long", func() { clk.Advance(time.Second) }, "notify silent for 31s"},
		{"beats again", func() { notify.Beat(); relay.Beat() }, ""},
		{"stopped", func() { relay.Stop() }, "outbox stopped"},
		{"registered again", func() { hb.Register("outbox", time.Minute) }, ""},
	}
	for _, tc := range cases {
		tc.step()
		err := hb.Check(context.Background())
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Fatalf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
		}
	}
	var nilBeat *telemetry.Heartbeat
	nilBeat.Beat() // a nil heartbeat is a no-op
	nilBeat.Stop()
}

func TestReadinessReportsOnlySafeReasons(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	// The checks here end at once; the hour is so that no pause of a busy
	// machine can time out the one that holds (the time-out has its own
	// test below).
	h := telemetry.NewHealth(slog.New(slog.NewJSONHandler(&logs, nil)),
		telemetry.Check{Name: "ok", Run: func(context.Context) error { return nil }},
		telemetry.Check{Name: "database", Run: func(context.Context) error {
			return telemetry.Failed("unreachable", errors.New("dial tcp db.internal:5432: password authentication failed for user s3cr3t"))
		}},
		telemetry.Check{Name: "opaque", Run: func(context.Context) error { return errors.New("token=bkp_leak") }},
	).WithTimeout(time.Hour)
	rec := httptest.NewRecorder()
	h.ReadyHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	body := rec.Body.String()
	if rec.Code != 503 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", rec.Code, body)
	}
	for _, want := range []string{`"status":"fail"`, `"failing":["database","opaque"]`, `"reason":"unreachable"`, `"reason":"failed"`, `{"name":"ok","status":"ok"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s: %s", want, body)
		}
	}
	for _, leak := range []string{"s3cr3t", "db.internal", "bkp_leak"} {
		if strings.Contains(body, leak) {
			t.Errorf("body leaks %q", leak)
		}
	}
	if !strings.Contains(logs.String(), "db.internal") {
		t.Error("the cause was not logged for the operator")
	}
}

// A check that does not end by itself fails as "timed out" once its time
// is up, whatever the speed of the machine (it returns only then).
func TestReadinessTimesOutASlowCheck(t *testing.T) {
	t.Parallel()
	h := telemetry.NewHealth(slog.New(slog.DiscardHandler),
		telemetry.Check{Name: "slow", Run: func(ctx context.Context) error { <-ctx.Done(); return nil }},
	).WithTimeout(50 * time.Millisecond)
	rec := httptest.NewRecorder()
	h.ReadyHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	body := rec.Body.String()
	if rec.Code != 503 || !strings.Contains(body, `"failing":["slow"]`) || !strings.Contains(body, `"reason":"timed out"`) {
		t.Fatalf("%d %s, want 503 with slow failing as timed out", rec.Code, body)
	}
}

func TestBacklogGauges(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		clk := clocktest.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
		var logs bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&logs, nil))
		m := telemetry.NewMetrics(clk.Now)
		m.WatchBacklog(db, log)
		scrape := func() string {
			rec := httptest.NewRecorder()
			m.Handler(log).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			if rec.Code != 200 {
				t.Fatalf("scrape: %d", rec.Code)
			}
			return rec.Body.String()
		}
		body := scrape()
		for _, want := range []string{"bokat_outbox_lag_seconds 0\n", "bokat_notification_lag_seconds 0\n"} {
			if !strings.Contains(body, want) {
				t.Errorf("empty store: lacks %q", want)
			}
		}
		ctx := context.Background()
		now := clk.Now()
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			for i, age := range []time.Duration{90 * time.Second, 10 * time.Second} {
				id := []string{"0190d7a4-0000-7000-8000-000000000001", "0190d7a4-0000-7000-8000-000000000002"}[i]
				if err := tx.InsertOutboxEvent(ctx, outbox.Event{ID: id, OwnerClientID: "pc", BookingID: "b",
					EventType: string(bokat.EventBookingConfirmed), Payload: []byte(`{}`), OccurredAt: now.Add(-age), CreatedAt: now.Add(-age)}); err != nil {
					return err
				}
			}
			// Due 30 s ago, and one not due yet.
			for i, due := range []time.Duration{-30 * time.Second, time.Hour} {
				if err := tx.InsertNotificationJob(ctx, bokat.NotificationJob{ID: []string{"j1", "j2"}[i],
					OutboxID: "0190d7a4-0000-7000-8000-000000000001", BookingID: "b", EventType: string(bokat.EventBookingConfirmed),
					Recipient: bokat.RecipientCustomer, Status: bokat.NotificationPending, NextAttemptAt: now.Add(due), CreatedAt: now.Add(-time.Minute)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		body = scrape()
		for _, want := range []string{"bokat_outbox_lag_seconds 90\n", "bokat_notification_lag_seconds 30\n"} {
			if !strings.Contains(body, want) {
				t.Errorf("lacks %q:\n%s", want, grepLines(body, "lag"))
			}
		}
		// Without a database the gauges drop out; the rest is still served.
		db.Close()
		body = scrape()
		if strings.Contains(body, "bokat_outbox_lag_seconds ") || !strings.Contains(body, "go_goroutines") {
			t.Errorf("closed store: %s", grepLines(body, "lag"))
		}
		if !strings.Contains(logs.String(), "outbox lag query failed") {
			t.Error("the failed query was not logged")
		}
	})
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestMetricsMethodsAreSafeOnNil(t *testing.T) {
	t.Parallel()
	var m *telemetry.Metrics
	m.BookingConfirmed()
	m.BookingCancelled()
	m.BookingRescheduled()
	m.WebhookDelivery(telemetry.ResultDelivered)
	m.Notification("customer", telemetry.ResultSent)
	m.RateLimited("reads")
	m.RateLimitBackendError()
	m.ObserveRequest("GET", "/", 200, time.Millisecond)
}

// TestObserveRequestCountsEverySeries checks the request series, cached
// and past the cache's bound, against what the registry exposes.
func TestObserveRequestCountsEverySeries(t *testing.T) {
	t.Parallel()
	m := telemetry.NewMetrics(nil)
	want := map[string]float64{}
	observe := func(method, route string, status int) {
		m.ObserveRequest(method, route, status, 3*time.Millisecond)
		want[method+" "+route+" "+strconv.Itoa(status)]++
	}
	for range 3 {
		observe("POST", "/v1/booking-options", 200)
	}
	observe("POST", "/v1/booking-options", 400)
	observe("GET", "/v1/bookings/{booking_id}", 200)
	// More distinct series than the cache keeps: each is still counted.
	for i := range 1100 {
		observe(fmt.Sprintf("M%d", i), "", 404)
	}
	observe("M1099", "", 404)
	observe("POST", "/v1/booking-options", 200)

	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	durations := map[string]uint64{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch f.GetName() {
			case "bokat_http_requests_total":
				got[labels["method"]+" "+labels["route"]+" "+labels["status"]] = s.GetCounter().GetValue()
			case "bokat_http_request_duration_seconds":
				durations[labels["method"]+" "+labels["route"]] = s.GetHistogram().GetSampleCount()
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d request series, want %d", len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("requests %q = %v, want %v", k, got[k], n)
		}
	}
	if durations["POST /v1/booking-options"] != 5 || durations["M1099 "] != 2 || durations["M0 "] != 1 {
		t.Errorf("duration counts: POST %d, M1099 %d, M0 %d; want 5, 2, 1",
			durations["POST /v1/booking-options"], durations["M1099 "], durations["M0 "])
	}
}
