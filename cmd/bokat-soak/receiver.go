package main

import (
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"bokat/webhookverify"
)

// receiver is a local webhook endpoint. failEvery > 0 makes it answer 503
// to every failEvery-th delivery attempt (the failing endpoint).
type receiver struct {
	name       string
	url        string
	endpointID string
	failEvery  int64
	srv        *http.Server

	verifier atomic.Pointer[webhookverify.Verifier]
	attempts atomic.Int64
	bad      atomic.Int64 // deliveries whose signature did not verify

	mu sync.Mutex
	// first is when each outbox event first arrived and was acknowledged.
	first map[string]time.Time
}

func newReceiver(name string, failEvery int64) (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{name: name, url: "http://" + ln.Addr().String() + "/hook", failEvery: failEvery, first: map[string]time.Time{}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serveHTTP), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) setSecret(secret string) error {
	v, err := webhookverify.New(secret)
	if err != nil {
		return err
	}
	r.verifier.Store(v)
	return nil
}

func (r *receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	n := r.attempts.Add(1)
	v := r.verifier.Load()
	if v == nil {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	_, body, err := v.VerifyRequest(req)
	if err != nil {
		r.bad.Add(1)
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	if r.failEvery > 0 && n%r.failEvery == 0 {
		http.Error(w, "failing on purpose", http.StatusServiceUnavailable)
		return
	}
	var ev struct {
		OutboxID string `json:"outbox_id"`
	}
	if json.Unmarshal(body, &ev) != nil || ev.OutboxID == "" {
		http.Error(w, "no outbox_id", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if _, ok := r.first[ev.OutboxID]; !ok {
		r.first[ev.OutboxID] = time.Now()
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) got(outboxID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.first[outboxID]
	return ok
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.first)
}

func (r *receiver) close() { _ = r.srv.Close() }
