package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
	"bokat/webhookverify"
)

// TestServeDeliversWebhooksAcrossAKeyRotation runs the real program: it
// registers a receiver over HTTP, writes outbox events into the database as
// the booking code would, and sees them delivered by serve's own workers,
// before and after the secret key is rotated.
func TestServeDeliversWebhooksAcrossAKeyRotation(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	keyA := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xA1}, 32))
	keyB := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xB2}, 32))
	rc := webhooktest.NewReceiver(t, nil)

	baseURL, token, _, stop := startServe(t, []string{"--demo", "--webhook-allow-private", "--database", dbURL, "--secret-key", keyA}, nil)
	body, _ := json.Marshal(map[string]any{"url": rc.URL, "event_types": []string{"booking.confirmed"}})
	req, _ := http.NewRequest("POST", baseURL+"/v1/webhook-endpoints", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Endpoint      struct{ ID string } `json:"endpoint"`
		SigningSecret string              `json:"signing_secret"`
	}
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("register: %d %v", resp.StatusCode, err)
	}
	verifier, err := webhookverify.New(created.SigningSecret)
	if err != nil {
		t.Fatal(err)
	}
	// The official Standard Webhooks library takes the secret as issued.
	official, err := standardwebhooks.NewWebhook(created.SigningSecret)
	if err != nil {
		t.Fatal(err)
	}

	store, err := sqlstore.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	writeEvent := func(bookingID string) string {
		t.Helper()
		id := uuid.Must(uuid.NewV7()).String()
		now := time.Now()
		ev := outbox.Event{ID: id, OwnerClientID: "pc_demo", BookingID: bookingID, EventType: "booking.confirmed",
			Payload: []byte(`{"booking":{"id":"` + bookingID + `","status":"confirmed","provider_id":"prov_clean_gbg_1",` +
				`"provider_name":"Städ Göteborg AB","service_id":"cleaning_window_per_window","slot_start_at":"2026-05-07T06:00:00Z",` +
				`"slot_end_at":"2026-05-07T08:00:00Z","price_sek":1200,"currency":"SEK","confirmed_at":"2026-05-04T09:00:00Z",` +
				`"terms_version":"fixed_price_terms_v1:cleaning_window_per_window"},"request_id":"rq_` + bookingID + `"}`),
			OccurredAt: now, CreatedAt: now}
		if err := store.InTx(context.Background(), func(tx *sqlstore.Tx) error { return tx.InsertOutboxEvent(context.Background(), ev) }); err != nil {
			t.Fatal(err)
		}
		return id
	}
	check := func(n int, outboxID string) {
		t.Helper()
		got := rc.WaitFor(t, n)[n-1]
		if _, err := verifier.Verify(got.Header, got.Body); err != nil {
			t.Fatalf("delivery %d does not verify: %v", n, err)
		}
		if err := official.Verify(got.Body, got.Header); err != nil {
			t.Fatalf("delivery %d does not verify with the Standard Webhooks library: %v", n, err)
		}
		if !strings.Contains(string(got.Body), `"outbox_id":"`+outboxID+`"`) {
			t.Fatalf("delivery %d is not of event %s: %s", n, outboxID, got.Body)
		}
	}

	check(1, writeEvent("bk_before"))
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	ep, err := store.WebhookEndpoint(context.Background(), created.Endpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	rawA, _ := base64.StdEncoding.DecodeString(keyA)
	if ep.SecretKeyID != webhook.KeyID(rawA) {
		t.Fatalf("secret sealed with key %s, want the configured key %s", ep.SecretKeyID, webhook.KeyID(rawA))
	}

	// Rotate: the new key seals, the old one still opens the stored secret.
	_, _, _, stop2 := startServe(t, []string{"--webhook-allow-private", "--database", dbURL, "--secret-key", keyB + "," + keyA}, nil)
	check(2, writeEvent("bk_after"))
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
}
