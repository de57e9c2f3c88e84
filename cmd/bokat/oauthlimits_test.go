package main

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"bokat/internal/clocktest"
)

// TestServeLimitsOAuthClientAuthentication: serve puts the OAuth endpoints
// on its limiter, with the budgets of the flags' environment twins, and
// counts the refusals in the metrics. The program's clock stands still, so
// Retry-After is exact however slowly the requests run.
func TestServeLimitsOAuthClientAuthentication(t *testing.T) {
	t.Parallel()
	base, _, logs, stop := startServeOn(t, clocktest.New(time.Now()).Now, []string{"--database", migratedSQLite(t)},
		map[string]string{"BOKAT_RATE_OAUTH_AUTH_FAILURES_IP": "2/min"})
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"bkr_x"},
		"client_id": {"oc_00000000000000000000000000000000"}, "client_secret": {"bks_wrong"}}
	var statuses []int
	var last *http.Response
	for range 3 {
		resp, err := http.PostForm(base+"/oauth/token", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
		last = resp
	}
	if statuses[0] != 401 || statuses[1] != 401 || statuses[2] != 429 || last.Header.Get("Retry-After") != "30" {
		t.Fatalf("three failed authentications: %v, Retry-After %q; want 401 401 429 with 30", statuses, last.Header.Get("Retry-After"))
	}
	if m := fetch(t, base+"/metrics"); !strings.Contains(m.body, `bokat_rate_limit_rejections_total{policy="oauth-auth-failures-ip"} 1`) {
		t.Errorf("the refusal is not counted:\n%s", m.body)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("errors logged:\n%s", logs.String())
	}
}

func TestServeRejectsBadOAuthLimits(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--rate-oauth-pages", "--rate-oauth-token", "--rate-oauth-auth-failures-ip",
		"--rate-oauth-auth-failures-client", "--rate-oauth-register", "--rate-signin-ip", "--rate-signin-address", "--rate-signin-global"} {
		var stdout, stderr bytes.Buffer
		err := run(clocktest.Patience(t), []string{"serve", "--addr", "127.0.0.1:0", "--database", migratedSQLite(t),
			flag, "5/fortnight"}, getenvFrom(nil), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), flag) || exitCode(err) != 2 {
			t.Errorf("%s 5/fortnight: err = %v, want a usage error naming the flag", flag, err)
		}
	}
}

// TestServeLimitsDynamicRegistration: the real program serves RFC 7591
// registration under its per-IP budget and advertises both ways MCP
// clients register themselves.
func TestServeLimitsDynamicRegistration(t *testing.T) {
	t.Parallel()
	base, _, _, stop := startServe(t, []string{"--database", migratedSQLite(t)},
		map[string]string{"BOKAT_RATE_OAUTH_REGISTER": "1/h"})
	defer stop()
	var statuses []int
	for range 2 {
		resp, err := http.Post(base+"/oauth/register", "application/json",
			strings.NewReader(`{"redirect_uris":["http://127.0.0.1:9999/cb"],"client_name":"Test"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	if statuses[0] != 201 || statuses[1] != 429 {
		t.Errorf("two registrations under 1/h: %v, want 201 429", statuses)
	}
	m := fetch(t, base+"/.well-known/oauth-authorization-server")
	if !strings.Contains(m.body, `"registration_endpoint":"`+base+`/oauth/register"`) ||
		!strings.Contains(m.body, `"client_id_metadata_document_supported":true`) {
		t.Errorf("metadata: %s", m.body)
	}
}
