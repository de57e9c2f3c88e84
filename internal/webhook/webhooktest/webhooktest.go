// Package webhooktest gives tests of webhook code a fixed name table in place
// of DNS and a receiving endpoint that records every delivery.
package webhooktest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat/internal/clocktest"
)

// Resolver answers name lookups from a table; names not in it do not
// resolve. It is safe for concurrent use and can change its answers
// mid-test (to play DNS rebinding).
type Resolver struct {
	mu    sync.Mutex
	table map[string][]netip.Addr
}

// NewResolver returns a Resolver with the entries "name=addr,addr,...".
func NewResolver(entries ...string) *Resolver {
	r := &Resolver{table: map[string][]netip.Addr{}}
	for _, e := range entries {
		name, addrs, _ := strings.Cut(e, "=")
		if addrs == "" {
			r.Set(name) // resolves, to no address
			continue
		}
		r.Set(name, strings.Split(addrs, ",")...)
	}
	return r
}

// Set makes name resolve to addrs.
func (r *Resolver) Set(name string, addrs ...string) {
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.table[strings.ToLower(name)] = out
}

// LookupNetIP implements webhook.Resolver.
func (r *Resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	addrs, ok := r.table[strings.ToLower(strings.TrimSuffix(host, "."))]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return append([]netip.Addr(nil), addrs...), nil
}

// Delivery is one request a Receiver got.
type Delivery struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// Receiver is a webhook endpoint on 127.0.0.1 that records every request
// and answers with the status its respond function chooses.
type Receiver struct {
	Server *httptest.Server
	// URL is where to register the receiver (http://127.0.0.1:port/hook).
	URL string

	mu         sync.Mutex
	deliveries []Delivery
	respond    func(n int, r *http.Request) int
}

// NewReceiver starts a Receiver closed when the test ends. respond gets the
// 0-based number of the request and returns the status to answer; nil
// always answers 204. A negative status makes the receiver hold the request
// until the client gives up.
func NewReceiver(tb testing.TB, respond func(n int, r *http.Request) int) *Receiver {
	tb.Helper()
	rc := &Receiver{respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	tb.Cleanup(rc.Server.Close)
	rc.URL = rc.Server.URL + "/hook"
	return rc
}

func (rc *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	n := len(rc.deliveries)
	rc.deliveries = append(rc.deliveries, Delivery{Header: r.Header.Clone(), Body: body, At: time.Now()})
	respond := rc.respond
	rc.mu.Unlock()
	status := http.StatusNoContent
	if respond != nil {
		status = respond(n, r)
	}
	if status < 0 {
		<-r.Context().Done()
		return
	}
	w.WriteHeader(status)
}

// Deliveries returns the requests received so far.
func (rc *Receiver) Deliveries() []Delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Delivery(nil), rc.deliveries...)
}

// Count returns how many requests arrived.
func (rc *Receiver) Count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.deliveries)
}

// WaitFor waits until at least n requests arrived, failing the test only
// shortly before the test binary's deadline (see clocktest.Wait).
func (rc *Receiver) WaitFor(tb testing.TB, n int) []Delivery {
	tb.Helper()
	clocktest.Wait(tb, fmt.Sprintf("%d deliveries at the %s", n, rc), func() bool { return rc.Count() >= n })
	return rc.Deliveries()
}

// String describes the receiver for test messages.
func (rc *Receiver) String() string { return fmt.Sprintf("receiver at %s", rc.URL) }
