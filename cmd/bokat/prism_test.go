package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bokat/internal/clocktest"
)

// TestPrismValidatesTheServedDocument puts Stoplight Prism's validating
// proxy, given the document exactly as served at /v1/openapi.json, in front
// of the real program: the main flows pass through with no violation, and a
// bad request is reported (so Prism really validates). BOKAT_TEST_PRISM
// names the prism binary (.ci/run installs the pinned one).
func TestPrismValidatesTheServedDocument(t *testing.T) {
	prism := os.Getenv("BOKAT_TEST_PRISM")
	if prism == "" {
		t.Skip("BOKAT_TEST_PRISM is not set (.ci/run sets it to the pinned Prism)")
	}
	t.Parallel()
	baseURL, token, _, stop := startServe(t, []string{"--demo", "--database", migratedSQLite(t)}, nil)
	t.Cleanup(func() { _ = stop() })
	doc := filepath.Join(t.TempDir(), "openapi.json")
	served := fetch(t, baseURL+"/v1/openapi.json")
	if served.status != 200 || !strings.Contains(served.body, `"servers":[{"description":"This server.","url":"`+baseURL+`"}]`) {
		t.Fatalf("served document: %d, servers not rendered for %s", served.status, baseURL)
	}
	if err := os.WriteFile(doc, []byte(served.body), 0o600); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, prism, "proxy", doc, baseURL, "--host", "127.0.0.1", "--port", fmt.Sprint(port))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Prism is listening") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case <-ready:
	case <-clocktest.Patience(t).Done():
		t.Fatal("Prism did not start before the test binary's deadline")
	}
	proxy := fmt.Sprintf("http://127.0.0.1:%d", port)

	violations := func(what string, status int, resp *http.Response) string {
		t.Helper()
		if resp.StatusCode != status {
			t.Errorf("%s: status %d, want %d", what, resp.StatusCode, status)
		}
		return resp.Header.Get("sl-violations")
	}
	send := func(method, path, token string, body any) *http.Response {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		}
		req, _ := http.NewRequest(method, proxy+path, rd)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s through Prism: %v", method, path, err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	status, search, err := call(http.DefaultClient, "POST", proxy+"/v1/booking-options", "", crashSearch)
	if err != nil || status != 200 || len(search["options"].([]any)) == 0 {
		t.Fatalf("search through Prism: %d %v", status, err)
	}
	option := search["options"].([]any)[0].(map[string]any)
	// One body for the confirmation and its replay: its acceptance time is
	// part of the idempotency fingerprint.
	confirm := crashConfirm(option, "prism-1")
	status, confirmed, err := call(http.DefaultClient, "POST", proxy+"/v1/bookings", token, confirm)
	if err != nil || status != 201 {
		t.Fatalf("confirm through Prism: %d %v %v", status, confirmed, err)
	}
	bookingID := confirmed["booking"].(map[string]any)["id"].(string)
	for _, c := range []struct {
		what, method, path, token string
		body                      any
		status                    int
	}{
		{"capabilities", "GET", "/v1/capabilities", "", nil, 200},
		{"search", "POST", "/v1/booking-options", "", crashSearch, 200},
		{"status", "GET", "/v1/bookings/" + bookingID, token, nil, 200},
		{"status of an unknown booking", "GET", "/v1/bookings/bk_unknown", token, nil, 200},
		{"webhook endpoints", "GET", "/v1/webhook-endpoints", token, nil, 200},
		{"replayed confirmation", "POST", "/v1/bookings", token, confirm, 200},
		{"legacy capabilities", "GET", "/api/public/requests/capabilities", "", nil, 200},
	} {
		if v := violations(c.what, c.status, send(c.method, c.path, c.token, c.body)); v != "" {
			t.Errorf("%s: Prism reports %s", c.what, v)
		}
	}
	bad := send("POST", "/v1/booking-options", "", map[string]any{"vertical_id": "vvs"})
	if v := violations("bad search", 400, bad); !strings.Contains(v, "job_type_id") {
		t.Errorf("Prism did not report the missing job_type_id: sl-violations %q", v)
	}
}
