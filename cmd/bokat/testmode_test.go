package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/notify/notifytest"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestTestModeSendsNoEMailAndCapturesItInstead runs the real program: a
// test credential from `partner create --mode test` books the magic test
// providers; no message reaches the SMTP server, the messages are readable
// at GET /v1/test/messages, the taken provider answers 409, the unreachable
// one's message fails, and a live credential is refused the test route.
func TestTestModeSendsNoEMailAndCapturesItInstead(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			dbURL := sqlstoretest.URL(t, engine)
			var out, errOut bytes.Buffer
			if err := run(context.Background(), []string{"partner", "create", "--mode", "test", "--name", "integrator",
				"--scopes", "all", "--database", dbURL}, getenvFrom(nil), &out, &errOut); err != nil {
				t.Fatalf("partner create --mode test: %v\n%s", err, errOut.String())
			}
			var p struct{ Token string }
			if err := json.Unmarshal(out.Bytes(), &p); err != nil || !strings.HasPrefix(p.Token, bokat.PartnerTestTokenPrefix) {
				t.Fatalf("partner create --mode test printed %q (%v), want a %s token", out.String(), err, bokat.PartnerTestTokenPrefix)
			}
			smtpServer := notifytest.NewServer(t, notifytest.Options{})
			baseURL, liveToken, _, _ := startServe(t, []string{"--demo", "--database", dbURL,
				"--smtp-url", "smtp://" + smtpServer.Addr + "?starttls=none", "--mail-from", "Bokat <bokning@mail.bokat.example>"}, nil)
			f := &e2eFlow{t: t, baseURL: baseURL, token: p.Token, smtp: smtpServer, client: &http.Client{Timeout: 10 * time.Second}}
			cust := e2eCustomer{"Testa Testsson", "+46 70 555 00 01", "testa.testsson@kund.example", "Testvägen 1"}

			free := f.option("sv-SE", bokat.TestProviderFree)
			id := f.call("POST", "/v1/bookings", cust.confirm(free, "t-free"))["booking"].(map[string]any)["id"].(string)
			unreachable := f.option("sv-SE", bokat.TestProviderUnreachable)
			failing := f.call("POST", "/v1/bookings", cust.confirm(unreachable, "t-unreachable"))["booking"].(map[string]any)["id"].(string)
			f.statuses(id, "sent", "sent")
			f.statuses(failing, "sent", "failed")

			taken := f.option("sv-SE", bokat.TestProviderTaken)
			status, res, err := call(f.client, "POST", baseURL+"/v1/bookings", p.Token, cust.confirm(taken, "t-taken"))
			if err != nil || status != 409 || res["code"] != string(bokat.CodeBookingOptionUnavailable) {
				t.Errorf("confirm the taken test provider: %d %v %v, want 409 booking_option_unavailable", status, res, err)
			}

			// Search: the follow-up-only provider is never offered; a
			// follow-up request reaches it.
			found := f.call("POST", "/v1/booking-options", map[string]any{
				"vertical_id": "vvs", "job_type_id": "install_faucet", "description": "Byta köksblandare, ny finns på plats.",
				"location": map[string]any{"country_code": "SE", "postcode": "113 45"},
				"timing":   map[string]any{"preferred_time_text": "inom två veckor"}})
			for _, o := range found["options"].([]any) {
				if id := o.(map[string]any)["provider"].(map[string]any)["id"]; id == bokat.TestProviderFollowUpOnly {
					t.Errorf("search offered %s", id)
				}
			}
			req := f.call("POST", "/v1/requests", map[string]any{"vertical_id": "vvs", "job_type_id": "leak_visible",
				"description": "Det droppar från röret under diskbänken.", "user_consent_confirmed": true,
				"customer": map[string]any{"name": cust.name, "phone": cust.phone, "email": cust.email},
				"location": map[string]any{"address": cust.address, "postcode": "113 45"},
				"timing":   map[string]any{"preferred_time_text": "nästa vecka"}})["request"].(map[string]any)
			var cands []string
			for _, c := range req["provider_candidates"].([]any) {
				cands = append(cands, c.(map[string]any)["id"].(string))
			}
			if !containsString(cands, bokat.TestProviderFollowUpOnly) {
				t.Errorf("request candidates %v lack %s", cands, bokat.TestProviderFollowUpOnly)
			}
			for _, c := range cands {
				if !strings.HasPrefix(c, bokat.TestProviderIDPrefix) {
					t.Errorf("a test request reached the live provider %s", c)
				}
			}

			msgs := f.call("GET", "/v1/test/messages", nil)["messages"].([]any)
			got := map[string]int{}
			for _, m := range msgs {
				m := m.(map[string]any)
				booking, _ := m["booking_id"].(string) // empty for a follow-up request's message
				got[booking+" "+m["recipient"].(string)]++
			}
			for _, want := range []string{id + " customer", id + " provider", failing + " customer"} {
				if got[want] != 1 {
					t.Errorf("captured messages %v lack %q once", got, want)
				}
			}
			if got[failing+" provider"] != 0 {
				t.Errorf("the unreachable provider's message was captured: %v", got)
			}
			if n := len(smtpServer.Messages()); n != 0 {
				t.Errorf("test activity sent %d e-mails, want none", n)
			}
			if status, res, _ := call(f.client, "GET", baseURL+"/v1/test/messages", liveToken, nil); status != 403 {
				t.Errorf("a live token on /v1/test/messages: %d %v, want 403", status, res)
			}
		})
	}
}
