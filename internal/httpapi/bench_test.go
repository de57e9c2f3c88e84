package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSearchHandler is one POST /v1/booking-options through the whole
// handler stack (metadata, authentication, body checks, contract
// validation, search, encoding) on the demo supply, without the network.
func BenchmarkSearchHandler(b *testing.B) {
	e := sqliteEnv(b).withDemoSupply()
	body, _ := json.Marshal(faucetSearch())
	benchSearches(b, e.srv.Handler(), body)
}

// benchSearches runs b's loop of POST /v1/booking-options with body
// through h, after one search that builds the search index, and reports
// the process's CPU time and the answer's size per search.
func benchSearches(b *testing.B, h http.Handler, body []byte) {
	b.Helper()
	search := func() *countingWriter {
		req := httptest.NewRequest("POST", "/v1/booking-options", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := &countingWriter{header: http.Header{}}
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
		return w
	}
	search()
	b.ReportAllocs()
	var size int
	cpu0 := processCPU(b)
	b.ResetTimer()
	for b.Loop() {
		size = search().n
	}
	b.StopTimer()
	// On a shared machine wall time per op includes waiting for a core; the
	// process's CPU time per op (garbage collection included) does not.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(size), "resp-bytes")
}

// processCPU returns the CPU time the process has used (user and system).
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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

// BenchmarkAppendJSONString is the string encoder of every hand-written
// response encoder on a condition text of a tax estimate (mostly ASCII,
// some Swedish letters): six options of a search carry several each.
func BenchmarkAppendJSONString(b *testing.B) {
	s := "Arbetet ska utföras i en bostad som du äger eller hyr och där du bor, eller i ett fritidshus du äger. " +
		"Du måste ha betalat arbetet elektroniskt."
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(s)))
	cpu0 := processCPU(b)
	for b.Loop() {
		buf = appendJSONString(buf[:0], s)
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}
