package httpapi

import (
	"regexp"
	"strconv"
	"testing"

	"bokat"
)

// TestCapabilitiesAuthErrorsAreWhatTheServerAnswers: every status the
// capabilities' auth text names comes with its code, every such pair is
// one the code table answers, and the answers the server gives for a
// missing credential, a missing scope and another client's booking are
// among them.
func TestCapabilitiesAuthErrorsAreWhatTheServerAnswers(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	r := e.do(request{Method: "GET", Path: "/v1/capabilities"})
	text, _ := r.JSON["auth"].(map[string]any)["errors"].(string)
	if r.Status != 200 || text == "" {
		t.Fatalf("capabilities: %d, auth.errors %q", r.Status, text)
	}
	named := map[string]bool{} // "404 booking_not_found"
	for _, m := range regexp.MustCompile(`\b(\d{3})\b(?: ([a-z]+(?:_[a-z]+)*))?`).FindAllStringSubmatch(text, -1) {
		status, code := m[1], m[2]
		info, known := codes[bokat.Code(code)]
		if !known {
			t.Errorf("auth.errors names status %s without a code the server answers (%q)", status, code)
			continue
		}
		if got := strconv.Itoa(info.Status); got != status {
			t.Errorf("auth.errors says %s %s; the server answers %s with %s", status, code, code, got)
		}
		named[status+" "+code] = true
	}

	// What the server answers, each of which the text must name.
	b := e.confirm(t, e.options(t, faucetSearch())[0], "k-auth")
	other := e.partner("other", bokat.AllScopes()...)
	readOnly := e.partner("read-only", bokat.ScopeBookingsRead)
	cancel := "/v1/bookings/" + b["id"].(string) + "/cancel"
	for _, tc := range []struct {
		name  string
		token string
		path  string
		body  map[string]any
	}{
		{"no credential", "", cancel, cancelBody("k-1")},
		{"a missing scope", readOnly, cancel, cancelBody("k-2")},
		{"another client's booking", other, cancel, cancelBody("k-3")},
		{"another client's booking, reschedule options", other, "/v1/bookings/" + b["id"].(string) + "/booking-options", rescheduleOptionsBody()},
		{"another client's webhook endpoint", other, "/v1/webhook-endpoints/whe_unknown/enable", nil},
	} {
		req := request{Method: "POST", Path: tc.path, Body: tc.body}
		if tc.token != "" {
			req.Header = bearer(tc.token)
		}
		got := e.do(req)
		if pair := strconv.Itoa(got.Status) + " " + got.JSON["code"].(string); !named[pair] {
			t.Errorf("%s: the server answers %s, which auth.errors does not name: %q", tc.name, pair, text)
		}
	}
}
