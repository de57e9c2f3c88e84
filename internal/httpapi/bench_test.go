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
		w := &countingWriter{header: http.Header{}}
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
		size = w.n
	}
	b.ReportMetric(float64(size), "resp-bytes")
}

// countingWriter is a ResponseWriter that keeps only the status and the
// body length, so the benchmark measures the handler, not a recorder.
type countingWriter struct {
	header http.Header
	status int
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *countingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(p)
	return len(p), nil
}
