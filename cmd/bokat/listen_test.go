package main

import (
	"bokat/internal/logtest"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"bokat"
	"bokat/internal/clocktest"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestListenForwardsRealEventsThatStandardWebhooksVerifies runs the real
// program and `bokat listen` with a test token: a test booking's event
// reaches a local receiver, signed under the secret listen printed so that
// the official Standard Webhooks library verifies it; the receiver's first
// failure is retried in accelerated time.
func TestListenForwardsRealEventsThatStandardWebhooksVerifies(t *testing.T) {
	t.Parallel()
	dbURL := sqlstoretest.URL(t, sqlstoretest.Engines()[0])
	var out, errOut logtest.Buffer
	if err := run(context.Background(), []string{"partner", "create", "--mode", "test", "--name", "listener",
		"--scopes", "all", "--database", dbURL}, getenvFrom(nil), &out, &errOut); err != nil {
		t.Fatalf("partner create: %v\n%s", err, errOut.String())
	}
	var p struct{ Token string }
	if err := json.Unmarshal([]byte(out.String()), &p); err != nil {
		t.Fatal(err)
	}
	baseURL, _, _, _ := startServe(t, []string{"--demo", "--database", dbURL}, nil)

	var (
		mu       sync.Mutex
		calls    int
		verified []string
		secret   string
		failures []string
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			w.WriteHeader(500) // the first delivery fails once
			return
		}
		wh, err := standardwebhooks.NewWebhook(secret)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		if err != nil {
			failures = append(failures, err.Error())
			w.WriteHeader(400)
			return
		}
		var ev struct{ Type string }
		_ = json.Unmarshal(body, &ev)
		verified = append(verified, ev.Type)
		w.WriteHeader(204)
	}))
	t.Cleanup(recv.Close)

	ctx, cancel := context.WithCancel(context.Background())
	var listenOut logtest.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"listen", "--base-url", baseURL, "--token", p.Token, "--forward-to", recv.URL,
			"--poll", "50ms"}, getenvFrom(nil), &listenOut, &errOut)
	}()
	t.Cleanup(func() { cancel(); <-done })
	secretRe := regexp.MustCompile(`signing secret: (whsec_\S+)`)
	waitFor(t, "listen's secret", func() bool { return secretRe.MatchString(listenOut.String()) })
	mu.Lock()
	secret = secretRe.FindStringSubmatch(listenOut.String())[1]
	mu.Unlock()

	f := &e2eFlow{t: t, baseURL: baseURL, token: p.Token, client: &http.Client{Timeout: 10 * time.Second}}
	cust := e2eCustomer{"Lyssna Lyssnarsson", "+46 70 555 00 02", "lyssna@kund.example", "Lyssnargatan 2"}
	f.call("POST", "/v1/bookings", cust.confirm(f.option("sv-SE", bokat.TestProviderFree), "listen-1"))

	waitFor(t, "a verified delivery", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(verified) > 0 || len(failures) > 0
	})
	mu.Lock()
	if len(failures) > 0 || len(verified) != 1 || verified[0] != "booking.confirmed" {
		defer mu.Unlock()
		t.Fatalf("verified %v, failures %v\n%s", verified, failures, listenOut.String())
	}
	mu.Unlock()
	// listen prints an attempt's line once the receiver's answer reached
	// it, after the receiver counted the delivery: wait for that line.
	waitFor(t, "listen's line of the second attempt", func() bool { return strings.Contains(listenOut.String(), "attempt 2  ") })
	text := listenOut.String()
	if !strings.Contains(text, "attempt 1  500") || !strings.Contains(text, "attempt 2  204") {
		t.Errorf("listen did not print each attempt's status:\n%s", text)
	}
}

// waitFor waits until cond holds, failing only shortly before the test
// binary's deadline (clocktest.Wait): the program runs beside the test,
// and a limit picked for an idle machine would fail a busy one.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	clocktest.Wait(t, what, cond)
}
