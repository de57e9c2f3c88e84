package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"bokat"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestTriggerProducesEachEventType runs the real program: `bokat trigger`
// with a test token makes the calls that produce each event type, which
// then appears in GET /v1/events; a live token is refused.
func TestTriggerProducesEachEventType(t *testing.T) {
	t.Parallel()
	dbURL := sqlstoretest.URL(t, sqlstoretest.Engines()[0])
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"partner", "create", "--mode", "test", "--name", "trigger",
		"--scopes", "all", "--database", dbURL}, getenvFrom(nil), &out, &errOut); err != nil {
		t.Fatalf("partner create: %v\n%s", err, errOut.String())
	}
	var p struct{ Token string }
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	baseURL, liveToken, _, _ := startServe(t, []string{"--demo", "--database", dbURL, "--mail-dir", t.TempDir()}, nil)
	f := &e2eFlow{t: t, baseURL: baseURL, token: p.Token, client: &http.Client{Timeout: 10 * time.Second}}

	// booking.cancelled by the provider: test_cancels, and the partner's
	// test clock an hour on. It goes first, so that the triggers below run
	// on a clock an hour ahead of the server's.
	if err := run(context.Background(), []string{"trigger", "--base-url", baseURL, "--token", p.Token, "--by-provider",
		string(bokat.EventBookingCancelled)}, getenvFrom(nil), &out, &errOut); err != nil {
		t.Fatalf("trigger --by-provider: %v\n%s%s", err, out.String(), errOut.String())
	}
	waitFor(t, "the provider's cancellation in the events", func() bool {
		for _, e := range f.call("GET", "/v1/events?limit=100", nil)["events"].([]any) {
			e := e.(map[string]any)
			if e["type"] == string(bokat.EventBookingCancelled) &&
				e["data"].(map[string]any)["booking"].(map[string]any)["provider_id"] == bokat.TestProviderCancels {
				return true
			}
		}
		return false
	})
	if off := f.call("GET", "/v1/test/clock", nil)["offset_seconds"]; off != 3600.0 {
		t.Errorf("the test clock's offset after --by-provider = %v, want 3600", off)
	}
	for _, ev := range []bokat.EventType{bokat.EventBookingConfirmed, bokat.EventBookingCancelled,
		bokat.EventBookingRescheduled, bokat.EventBookingProviderActionRequired} {
		out.Reset()
		errOut.Reset()
		if err := run(context.Background(), []string{"trigger", "--base-url", baseURL, "--token", p.Token, string(ev)},
			getenvFrom(nil), &out, &errOut); err != nil {
			t.Fatalf("trigger %s: %v\n%s%s", ev, err, out.String(), errOut.String())
		}
		waitFor(t, string(ev)+" in the events", func() bool {
			for _, e := range f.call("GET", "/v1/events?limit=100", nil)["events"].([]any) {
				if e.(map[string]any)["type"] == string(ev) {
					return true
				}
			}
			return false
		})
	}
	if err := run(context.Background(), []string{"trigger", "--base-url", baseURL, "--token", liveToken, "booking.confirmed"},
		getenvFrom(nil), &out, &errOut); err == nil || exitCode(err) != 2 {
		t.Errorf("trigger with a live token: %v, want a usage error", err)
	}
}
