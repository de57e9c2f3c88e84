package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"bokat/internal/outbox"
	"bokat/internal/webhook"
)

// listenConfig is what `bokat listen` runs with.
type listenConfig struct {
	baseURL, token, forwardTo string
	poll                      time.Duration
	// speedup divides the real retry ladder's waits.
	speedup int
}

// runListen follows the caller's events (GET /v1/events) from now on and
// forwards each to a local URL as a signed delivery, with the headers and
// signatures of real webhooks, under a stable local secret it prints first.
// A delivery the receiver fails is retried along the real retry ladder in
// accelerated time. It runs until ctx ends.
func runListen(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("listen", e)
	var c listenConfig
	fs.String(&c.baseURL, "base-url", "BOKAT_BASE_URL", "http://127.0.0.1:8080", "the Bokat server")
	fs.String(&c.token, "token", "BOKAT_TOKEN", "", "a partner token, test (bkp_test_…) or live (required)")
	fs.String(&c.forwardTo, "forward-to", "BOKAT_FORWARD_TO", "", "the local receiver's URL (required)")
	fs.Duration(&c.poll, "poll", "BOKAT_LISTEN_POLL", time.Second, "how often to ask for new events")
	var speedup string
	fs.String(&speedup, "speedup", "BOKAT_LISTEN_SPEEDUP", "1000", "how many times faster than the real retry ladder to retry")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	n, err := strconv.Atoi(speedup)
	if c.token == "" || c.forwardTo == "" || err != nil || n < 1 {
		return fmt.Errorf("%w: bokat listen --token TOKEN --forward-to URL [--base-url URL] [--speedup N]", errUsage)
	}
	c.speedup = n
	c.baseURL = strings.TrimRight(c.baseURL, "/")
	secret := listenSecret(c.token)
	client := &http.Client{Timeout: 10 * time.Second}
	after, err := latestEvent(ctx, client, c)
	if err != nil {
		return err
	}
	// Printed once listening: every event from here on is forwarded.
	fmt.Fprintf(e.stdout, "Forwarding to %s; signing secret: %s\n", c.forwardTo, secret)
	for {
		page, err := eventsAfter(ctx, client, c, after, 100)
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			forward(ctx, client, c, secret, ev, e)
		}
		if page.NextAfter != "" {
			after = page.NextAfter
		}
		if page.HasMore {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.poll):
		}
	}
}

// listenSecret is the local signing secret of a token: the same on every
// run with the token, and telling nothing of it.
func listenSecret(token string) string {
	m := hmac.New(sha256.New, []byte("bokat listen local signing secret"))
	m.Write([]byte(token))
	return "whsec_" + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// eventPage is a page of GET /v1/events.
type eventPage struct {
	Events    []json.RawMessage `json:"events"`
	NextAfter string            `json:"next_after"`
	HasMore   bool              `json:"has_more"`
}

// eventsAfter reads one page of the caller's events after the cursor.
func eventsAfter(ctx context.Context, client *http.Client, c listenConfig, after string, limit int) (eventPage, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if after != "" {
		q.Set("after", after)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.baseURL+"/v1/events?"+q.Encode(), nil)
	if err != nil {
		return eventPage{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return eventPage{}, nil
		}
		return eventPage{}, fmt.Errorf("read events: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		return eventPage{}, fmt.Errorf("read events: %s: %s", resp.Status, body)
	}
	var p eventPage
	if err := json.Unmarshal(body, &p); err != nil {
		return eventPage{}, fmt.Errorf("read events: %w", err)
	}
	return p, nil
}

// latestEvent returns the cursor after every event already there.
func latestEvent(ctx context.Context, client *http.Client, c listenConfig) (string, error) {
	after := ""
	for {
		p, err := eventsAfter(ctx, client, c, after, 100)
		if err != nil {
			return "", err
		}
		if p.NextAfter != "" {
			after = p.NextAfter
		}
		if !p.HasMore {
			return after, nil
		}
	}
}

// forward delivers one event body to the receiver, signed with secret,
// retrying along the real ladder divided by c.speedup until a 2xx or the
// ladder ends, and prints each attempt.
func forward(ctx context.Context, client *http.Client, c listenConfig, secret string, body json.RawMessage, e env) {
	var ev struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" {
		fmt.Fprintf(e.stdout, "skipped an event that is not a delivery body: %v\n", err)
		return
	}
	ladder := outbox.RetrySchedule()
	for attempt := 1; ; attempt++ {
		start := time.Now()
		status, err := deliverSigned(ctx, client, c.forwardTo, secret, ev.ID, body)
		took := time.Since(start).Round(time.Millisecond)
		switch {
		case err != nil:
			fmt.Fprintf(e.stdout, "%-36s %s  attempt %d  no answer (%v) after %s\n", ev.Type, ev.ID, attempt, err, took)
		default:
			fmt.Fprintf(e.stdout, "%-36s %s  attempt %d  %d in %s\n", ev.Type, ev.ID, attempt, status, took)
		}
		if err == nil && status/100 == 2 {
			return
		}
		if attempt > len(ladder) || ctx.Err() != nil {
			fmt.Fprintf(e.stdout, "%-36s %s  failed after %d attempts\n", ev.Type, ev.ID, attempt)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(ladder[attempt-1] / time.Duration(c.speedup)):
		}
	}
}

// deliverSigned posts body as a Standard Webhooks delivery with the id.
func deliverSigned(ctx context.Context, client *http.Client, target, secret, id string, body []byte) (int, error) {
	ts := time.Now().Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Webhook-Id", id)
	req.Header.Set("Webhook-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("Webhook-Signature", webhook.Sign(secret, id, ts, body))
	resp, err := client.Do(req)
	if err != nil {
		return 0, errors.Unwrap(err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
