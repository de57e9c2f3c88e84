package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkSearchHandler is one POST /v1/booking-options through the whole
// handler stack (metadata, authentication, body checks, contract
// validation, search, encoding) on the demo supply, without the network.
func BenchmarkSearchHandler(b *testing.B) {
	e := sqliteEnv(b).withDemoSupply()
	body, _ := json.Marshal(faucetSearch())
	h := e.srv.Handler()
	b.ReportAllocs()
	var size int
	for b.Loop() {
		req := httptest.NewRequest("POST", "/v1/booking-options", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "resp-bytes")
}
