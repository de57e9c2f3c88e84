package httpapi

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"bokat/internal/supply"
)

// TestProviderContactDataStaysOutOfResponses checks that the providers'
// e-mail addresses and phone numbers, which the store holds for
// notifications, appear in no search or request-creation response: the
// contract shows a provider's id, name, city and rating label only.
func TestProviderContactDataStaysOutOfResponses(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		cat, _ := loadCatalog()
		providers, err := supply.Parse(supply.DemoName, supply.Demo(), cat)
		if err != nil {
			t.Fatal(err)
		}
		var secrets []string
		for _, p := range providers {
			if p.Email == "" || p.Phone == "" {
				t.Fatalf("demo provider %s lacks contact data; the test would prove nothing", p.ID)
			}
			secrets = append(secrets, p.Email, p.Phone, strings.ReplaceAll(p.Phone, " ", ""))
		}
		leaks := func(what string, body []byte) {
			t.Helper()
			for _, s := range append(secrets, "@", ".example") {
				if strings.Contains(string(body), s) {
					t.Errorf("%s contains %q:\n%s", what, s, body)
				}
			}
		}

		search := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: faucetSearch()})
		if search.Status != 200 || search.JSON["option_count"].(float64) < 2 {
			t.Fatalf("search: %d %s", search.Status, search.Body)
		}
		leaks("the search response", search.Body)
		for _, o := range search.JSON["options"].([]any) {
			opt := o.(map[string]any)
			prov := opt["provider"].(map[string]any)
			for k := range prov {
				if k != "id" && k != "name" && k != "city" && k != "rating_label" {
					t.Errorf("option provider has member %q", k)
				}
			}
			// The option token carries its claims in base64: look inside,
			// at the bytes and at the claims they decode to. The bytes are
			// binary (bo2), so a price or a time may hold the byte '@': the
			// single-character markers are checked on the decoded claims.
			token := opt["booking_option_id"].(string)
			parts := strings.Split(token, ".")
			if len(parts) != 4 {
				t.Fatalf("booking_option_id has %d parts", len(parts))
			}
			raw, err := base64.RawURLEncoding.DecodeString(parts[2])
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range append(secrets, ".example") {
				if strings.Contains(string(raw), s) {
					t.Errorf("a booking option's claims contain %q", s)
				}
			}
			expires, err := time.Parse(time.RFC3339, opt["expires_at"].(string))
			if err != nil {
				t.Fatal(err)
			}
			claims, err := testOptionKeys.Verify(token, expires.Add(-time.Second))
			if err != nil {
				t.Fatalf("verify the option: %v", err)
			}
			leaks("a booking option's decoded claims", fmt.Appendf(nil, "%+v", claims))
		}

		body := set(validRequestBody(), "job_type_id", "install_faucet")
		body["customer"] = map[string]any{"name": "Greta Gåsfot", "phone": "+46701234567", "email": "greta.gasfot@kund.invalid"}
		created := e.do(request{Method: "POST", Path: "/v1/requests", Body: body, Header: bearer(e.token)})
		if created.Status != 201 {
			t.Fatalf("request: %d %s", created.Status, created.Body)
		}
		if n := created.JSON["request"].(map[string]any)["candidate_provider_count"].(float64); n < 2 {
			t.Fatalf("candidate_provider_count = %v; want the Stockholm providers", n)
		}
		leaks("the request-creation response", created.Body)
		for _, c := range created.JSON["request"].(map[string]any)["provider_candidates"].([]any) {
			for k := range c.(map[string]any) {
				if k != "id" && k != "name" && k != "can_receive_request" && k != "direct_booking" {
					t.Errorf("provider candidate has member %q", k)
				}
			}
		}
		leaks("the log", []byte(e.logs.String()))
	})
}
