package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLegacySunsetIsAnnouncedOnEveryLegacyResponse: with a sunset date set,
// every response of every deprecated path (success or error, with or without
// a credential) carries it as an RFC 8594 Sunset header; v1 paths never do,
// and without the setting no response does.
func TestLegacySunsetIsAnnouncedOnEveryLegacyResponse(t *testing.T) {
	t.Parallel()
	sunset := time.Date(2027, 6, 30, 0, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	const want = "Tue, 29 Jun 2027 22:00:00 GMT"
	with := sqliteEnv(t, func(c *envConfig) { c.LegacySunset = sunset })
	without := sqliteEnv(t)

	var legacy int
	for _, rt := range with.srv.routes() {
		if rt.successor == "" {
			continue
		}
		legacy++
		path := strings.ReplaceAll(rt.pattern, "{booking_id}", "bk_missing")
		for _, auth := range []string{"", "Bearer " + with.token} {
			r := with.do(request{Method: rt.method, Path: path, Body: "{}", Header: map[string]string{"Authorization": auth}})
			if got := r.Header.Get("Sunset"); got != want {
				t.Errorf("%s %s (%d, credential %t): Sunset = %q, want %q", rt.method, path, r.Status, auth != "", got, want)
			}
			if _, err := http.ParseTime(r.Header.Get("Sunset")); err != nil {
				t.Errorf("%s %s: Sunset is not an HTTP-date: %v", rt.method, path, err)
			}
		}
		r := without.do(request{Method: rt.method, Path: path, Body: "{}"})
		if got, ok := r.Header["Sunset"]; ok {
			t.Errorf("%s %s without a sunset date: Sunset = %q", rt.method, path, got)
		}
	}
	if legacy < 5 {
		t.Fatalf("found %d deprecated routes, want at least 5", legacy)
	}
	for _, path := range []string{"/v1/capabilities", "/v1/bookings/bk_missing"} {
		if r := with.do(request{Method: "GET", Path: path}); r.Header.Get("Sunset") != "" {
			t.Errorf("GET %s carries Sunset %q", path, r.Header.Get("Sunset"))
		}
	}
}
