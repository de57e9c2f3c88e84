package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/webhook"
)

// checkCase is one delivery webhook-check sends a receiver, and the answer
// a correct receiver gives it.
type checkCase struct {
	name string
	// accept: a correct receiver answers 2xx; otherwise anything but 2xx.
	accept bool
	// fault names what a receiver that answers otherwise gets wrong.
	fault string
	// build returns the delivery's headers and body.
	build func(now time.Time) (http.Header, []byte)
}

// runWebhookCheck sends a webhook receiver the cases it must handle and
// reports, for each, whether it answered as it should. It fails (exit 1)
// unless every case was answered as it should.
func runWebhookCheck(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("webhook-check", e)
	var target, secret string
	var timeout time.Duration
	fs.String(&target, "url", "BOKAT_WEBHOOK_CHECK_URL", "", "the receiver's URL (required)")
	fs.String(&secret, "secret", "BOKAT_WEBHOOK_SECRET", "", "the receiver's whsec_ signing secret (required)")
	fs.Duration(&timeout, "timeout", "BOKAT_WEBHOOK_CHECK_TIMEOUT", 8*time.Second, "how long to wait for each answer")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	if target == "" || !strings.HasPrefix(secret, "whsec_") {
		return fmt.Errorf("%w: bokat webhook-check --url URL --secret whsec_...", errUsage)
	}
	client := &http.Client{Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	failed := 0
	for _, c := range webhookCheckCases(secret) {
		h, body := c.build(e.now())
		status, err := deliverCheck(ctx, client, target, h, body)
		ok := err == nil && (status/100 == 2) == c.accept
		verdict := "ok"
		if !ok {
			failed++
			verdict = "FAULT: " + c.fault
		}
		answer := strconv.Itoa(status)
		if err != nil {
			answer = "no answer (" + err.Error() + ")"
		}
		want := "2xx"
		if !c.accept {
			want = "not 2xx"
		}
		fmt.Fprintf(e.stdout, "%-28s answered %-6s want %-8s %s\n", c.name, answer, want, verdict)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d cases answered wrongly", failed, len(webhookCheckCases(secret)))
	}
	fmt.Fprintln(e.stdout, "every case answered as it should")
	return nil
}

// webhookCheckCases are the deliveries of a check: each signed as Bokat
// signs (webhook.Sign), or deliberately not.
func webhookCheckCases(secret string) []checkCase {
	oldSecret := webhook.NewSigningSecret()
	replayID := "msg_" + uuid.NewString()
	signed := func(id, eventType string, at time.Time, sign func(id string, ts int64, body []byte) string) (http.Header, []byte) {
		body := checkBody(id, eventType, at)
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set("Webhook-Id", id)
		h.Set("Webhook-Timestamp", strconv.FormatInt(at.Unix(), 10))
		h.Set("Webhook-Signature", sign(id, at.Unix(), body))
		return h, body
	}
	good := func(id string, ts int64, body []byte) string { return webhook.Sign(secret, id, ts, body) }
	return []checkCase{
		{name: "valid delivery", accept: true, fault: "a correctly signed, fresh delivery was refused",
			build: func(now time.Time) (http.Header, []byte) { return signed(replayID, "booking.confirmed", now, good) }},
		{name: "wrong signature", accept: false, fault: "a delivery signed with another secret was accepted: verify Webhook-Signature",
			build: func(now time.Time) (http.Header, []byte) {
				return signed("msg_"+uuid.NewString(), "booking.confirmed", now, func(id string, ts int64, body []byte) string {
					return webhook.Sign(oldSecret, id, ts, body)
				})
			}},
		{name: "stale timestamp", accept: false, fault: "a delivery 10 minutes old was accepted: reject timestamps more than 5 minutes away",
			build: func(now time.Time) (http.Header, []byte) {
				return signed("msg_"+uuid.NewString(), "booking.confirmed", now.Add(-10*time.Minute), good)
			}},
		{name: "replayed Webhook-Id", accept: true, fault: "a retry of a delivery already received was refused: answer 2xx and skip it (deduplicate on Webhook-Id)",
			build: func(now time.Time) (http.Header, []byte) { return signed(replayID, "booking.confirmed", now, good) }},
		{name: "unknown event type", accept: true, fault: "an event type the receiver does not know was refused: acknowledge and ignore it",
			build: func(now time.Time) (http.Header, []byte) {
				return signed("msg_"+uuid.NewString(), "booking.something_new", now, good)
			}},
		{name: "rotated secret, two sigs", accept: true, fault: "a delivery carrying an old secret's signature beside the current one was refused: accept any matching v1 signature",
			build: func(now time.Time) (http.Header, []byte) {
				return signed("msg_"+uuid.NewString(), "booking.confirmed", now, func(id string, ts int64, body []byte) string {
					return webhook.Sign(oldSecret, id, ts, body) + " " + webhook.Sign(secret, id, ts, body)
				})
			}},
	}
}

// checkBody is a delivery body of the contract's shape, of a fictional
// booking.
func checkBody(id, eventType string, at time.Time) []byte {
	body, _ := json.Marshal(map[string]any{
		"id": id, "outbox_id": uuid.NewString(), "type": eventType,
		"occurred_at": at.UTC().Format(time.RFC3339Nano), "created_at": at.UTC().Format(time.RFC3339Nano),
		"spec_version": bokat.BookingsContractVersion,
		"data":         map[string]any{"booking": map[string]any{"id": bokat.BookingIDPrefix + "webhookcheck", "status": "confirmed"}},
	})
	return body
}

// deliverCheck posts one delivery and returns the receiver's status.
func deliverCheck(ctx context.Context, client *http.Client, target string, h http.Header, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header = h
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
