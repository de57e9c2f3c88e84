package webhookverify_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"bokat/webhookverify"
)

// A receiver verifies the raw body before parsing it and deduplicates on
// the returned Webhook-Id.
func ExampleVerifier_VerifyRequest() {
	const secret = "whsec_DFV3v66uAKxv3QjiQv829n0XR6ThVpCzgB+DVhvfwBI="
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	verifier, err := webhookverify.New(secret, webhookverify.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	seen := map[string]bool{} // use a table with a unique key in production

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, body, err := verifier.VerifyRequest(r)
		if err != nil {
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		if seen[id] {
			w.WriteHeader(http.StatusOK) // a retry of a delivery already handled
			return
		}
		seen[id] = true
		var event struct {
			Type string `json:"type"`
			Data struct {
				Booking struct {
					ID     string `json:"id"`
					Status string `json:"status"`
				} `json:"booking"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &event); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		fmt.Println(event.Type, event.Data.Booking.ID, event.Data.Booking.Status)
		w.WriteHeader(http.StatusNoContent)
	})

	// A delivery as Bokat sends it, sent twice (a retry keeps its Webhook-Id).
	body := `{"id":"0196a1b2-0000-7000-8000-000000000001","outbox_id":"0196a1b2-0000-7000-8000-0000000000aa",` +
		`"type":"booking.confirmed","data":{"booking":{"id":"bk_123","status":"confirmed"},"request_id":"rq_9"}}`
	for range 2 {
		r := httptest.NewRequest(http.MethodPost, "/hooks/bokat", strings.NewReader(body))
		r.Header.Set("Webhook-Id", "0196a1b2-0000-7000-8000-000000000001")
		r.Header.Set("Webhook-Timestamp", strconv.FormatInt(now.Unix(), 10))
		r.Header.Set("Webhook-Signature", webhookverify.Sign(secret, "0196a1b2-0000-7000-8000-000000000001", now, []byte(body)))
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		fmt.Println(w.Code)
	}

	// A body altered on the way fails verification.
	r := httptest.NewRequest(http.MethodPost, "/hooks/bokat", strings.NewReader(strings.Replace(body, "bk_123", "bk_666", 1)))
	r.Header.Set("Webhook-Id", "0196a1b2-0000-7000-8000-000000000001")
	r.Header.Set("Webhook-Timestamp", strconv.FormatInt(now.Unix(), 10))
	r.Header.Set("Webhook-Signature", webhookverify.Sign(secret, "0196a1b2-0000-7000-8000-000000000001", now, []byte(body)))
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, r)
	fmt.Println(w.Code)
	// Output:
	// booking.confirmed bk_123 confirmed
	// 204
	// 200
	// 400
}
