package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestServeShutsDownInOrder: once its context ends, serve drains HTTP, then
// stops the workers, then closes the store, and returns nil; the API then
// answers no more.
func TestServeShutsDownInOrder(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	baseURL, _, logs, stop := startServe(t, []string{"--database", dbURL}, nil)
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v on shutdown, want nil", err)
	}
	out, last := logs.String(), -1
	for _, step := range []string{"shutting down: draining HTTP", "shutting down: stopping workers", "shutting down: closing the store"} {
		i := strings.Index(out, step)
		if i <= last {
			t.Fatalf("%q is missing or out of order in the logs:\n%s", step, out)
		}
		last = i
	}
	if resp, err := http.Get(baseURL + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("the API answers %d after serve returned", resp.StatusCode)
	}
}
