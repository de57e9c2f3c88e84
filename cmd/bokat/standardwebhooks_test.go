package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bokat/internal/clocktest"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/webhook/webhooktest"
)

// TestTheNpmStandardWebhooksLibraryVerifiesDeliveries hands 48 deliveries of
// the real program to the official npm library (standardwebhooks, pinned in
// .ci/standardwebhooks), which must verify every one unchanged. It needs
// Node: BOKAT_TEST_NODE names the binary (.ci/run sets it to the pinned one
// and installs the library).
func TestTheNpmStandardWebhooksLibraryVerifiesDeliveries(t *testing.T) {
	node := os.Getenv("BOKAT_TEST_NODE")
	if node == "" {
		t.Skip("BOKAT_TEST_NODE is not set (.ci/run sets it to the pinned Node)")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", ".ci", "standardwebhooks", "verify.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Parallel()
	const n = 48
	dbURL := migratedSQLite(t)
	rc := webhooktest.NewReceiver(t, nil)
	baseURL, token, _, stop := startServe(t, []string{"--demo", "--webhook-allow-private", "--database", dbURL}, nil)
	t.Cleanup(func() { _ = stop() })

	reqBody, _ := json.Marshal(map[string]any{"url": rc.URL, "event_types": []string{"booking.confirmed"}})
	req, _ := http.NewRequest("POST", baseURL+"/v1/webhook-endpoints", bytes.NewReader(reqBody))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		SigningSecret string `json:"signing_secret"`
	}
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("register: %d %v", resp.StatusCode, err)
	}

	store, err := sqlstore.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for i := range n {
		bookingID := fmt.Sprintf("bk_sw%02d", i)
		now := time.Now()
		ev := outbox.Event{ID: uuid.Must(uuid.NewV7()).String(), OwnerClientID: "pc_demo", BookingID: bookingID,
			EventType: "booking.confirmed",
			Payload: []byte(`{"booking":{"id":"` + bookingID + `","status":"confirmed","provider_id":"prov_clean_gbg_1",` +
				`"provider_name":"Städ Göteborg AB","service_id":"cleaning_window_per_window","slot_start_at":"2026-05-07T06:00:00Z",` +
				`"slot_end_at":"2026-05-07T08:00:00Z","slot_label":"torsdag 7 maj 08:00–10:00","price_sek":` + fmt.Sprint(1000+i) +
				`,"currency":"SEK","confirmed_at":"2026-05-04T09:00:00Z",` +
				`"terms_version":"fixed_price_terms_v1:cleaning_window_per_window"},"request_id":"rq_` + bookingID + `"}`),
			OccurredAt: now, CreatedAt: now}
		if err := store.InTx(context.Background(), func(tx *sqlstore.Tx) error { return tx.InsertOutboxEvent(context.Background(), ev) }); err != nil {
			t.Fatal(err)
		}
	}
	got := rc.WaitFor(t, n)

	type delivery struct {
		Headers    map[string]string `json:"headers"`
		BodyBase64 []byte            `json:"body_base64"` // encoding/json writes []byte as standard base64
	}
	input := struct {
		Secret     string     `json:"secret"`
		Deliveries []delivery `json:"deliveries"`
	}{Secret: created.SigningSecret}
	for _, d := range got {
		h := map[string]string{}
		for _, k := range []string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature", "Content-Type"} {
			h[k] = d.Header.Get(k)
		}
		input.Deliveries = append(input.Deliveries, delivery{Headers: h, BodyBase64: d.Body})
	}
	file := filepath.Join(t.TempDir(), "deliveries.json")
	raw, _ := json.Marshal(input)
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(clocktest.Patience(t), node, script, file).CombinedOutput()
	t.Logf("node %s:\n%s", script, out)
	if err != nil {
		t.Fatalf("the npm library did not verify every delivery: %v", err)
	}
	if want := fmt.Sprintf("standardwebhooks: %d passed, 0 failed", n); !strings.Contains(string(out), want) {
		t.Fatalf("node printed %q, want %q", out, want)
	}
}
