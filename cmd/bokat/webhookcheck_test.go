package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat/internal/webhook"
	"bokat/webhookverify"
)

// checkReceiver is a webhook receiver built on webhookverify, correct
// unless one of its faults is set.
type checkReceiver struct {
	secret string
	// The faults of a broken receiver.
	skipSignature, skipTimestamp, refuseDuplicates, refuseUnknownTypes, firstSignatureOnly bool

	mu   sync.Mutex
	seen map[string]bool
}

func (c *checkReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tolerance := webhookverify.DefaultTolerance
	if c.skipTimestamp {
		tolerance = 365 * 24 * time.Hour
	}
	v, err := webhookverify.New(c.secret, webhookverify.WithTolerance(tolerance))
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	h := r.Header.Clone()
	if c.firstSignatureOnly {
		h.Set("Webhook-Signature", strings.Fields(h.Get("Webhook-Signature"))[0])
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(r.Body)
	id, err := v.Verify(h, body.Bytes())
	if err != nil && !(c.skipSignature && errors.Is(err, webhookverify.ErrNoMatchingSignature)) {
		http.Error(w, "bad delivery", 400)
		return
	}
	id = r.Header.Get("Webhook-Id")
	c.mu.Lock()
	dup := c.seen[id]
	c.seen[id] = true
	c.mu.Unlock()
	if dup && c.refuseDuplicates {
		http.Error(w, "duplicate", 409)
		return
	}
	var ev struct{ Type string }
	_ = json.Unmarshal(body.Bytes(), &ev)
	if c.refuseUnknownTypes && !strings.HasPrefix(ev.Type, "booking.confirmed") {
		http.Error(w, "unknown type", 422)
		return
	}
	w.WriteHeader(204)
}

// TestWebhookCheckPassesACorrectReceiverAndNamesEachFault runs the
// command against a correct receiver (exit 0) and against receivers broken
// in one way each (exit 1, that case's fault named, the others ok).
func TestWebhookCheckPassesACorrectReceiverAndNamesEachFault(t *testing.T) {
	t.Parallel()
	secret := webhook.NewSigningSecret()
	cases := []struct {
		name  string
		recv  *checkReceiver
		fault string // the case named as the fault; "" for none
	}{
		{"correct", &checkReceiver{}, ""},
		{"no signature check", &checkReceiver{skipSignature: true}, "wrong signature"},
		{"no timestamp check", &checkReceiver{skipTimestamp: true}, "stale timestamp"},
		{"refuses duplicates", &checkReceiver{refuseDuplicates: true}, "replayed Webhook-Id"},
		{"refuses unknown types", &checkReceiver{refuseUnknownTypes: true}, "unknown event type"},
		{"first signature only", &checkReceiver{firstSignatureOnly: true}, "rotated secret, two sigs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.recv.secret, c.recv.seen = secret, map[string]bool{}
			srv := httptest.NewServer(c.recv)
			t.Cleanup(srv.Close)
			var out, errOut bytes.Buffer
			err := run(context.Background(), []string{"webhook-check", "--url", srv.URL, "--secret", secret}, getenvFrom(nil), &out, &errOut)
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if c.fault == "" {
				if err != nil || !strings.Contains(out.String(), "every case answered as it should") {
					t.Fatalf("a correct receiver: err %v\n%s", err, out.String())
				}
				return
			}
			if err == nil || exitCode(err) != 1 {
				t.Fatalf("a receiver that fails %q: err %v, want exit 1\n%s", c.fault, err, out.String())
			}
			faults := 0
			for _, l := range lines {
				if strings.Contains(l, "FAULT") {
					faults++
					if !strings.HasPrefix(l, c.fault) {
						t.Errorf("fault named on %q, want on %q", l, c.fault)
					}
				}
			}
			if faults != 1 {
				t.Errorf("%d faults named, want 1:\n%s", faults, out.String())
			}
		})
	}
}
