package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/testrealm"
)

// triggerClient makes the API calls of `bokat trigger`.
type triggerClient struct {
	ctx     context.Context
	http    *http.Client
	baseURL string
	token   string
}

// runTrigger makes the real calls that produce the event type named: a
// search and a confirmation of a magic test provider, then a cancel or a
// reschedule; booking.provider_action_required books the test provider
// whose message fails (the event follows once the message has failed). It
// prints each call and the booking id.
func runTrigger(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("trigger", e)
	var baseURL, token string
	var byProvider bool
	fs.String(&baseURL, "base-url", "BOKAT_BASE_URL", "http://127.0.0.1:8080", "the Bokat server")
	fs.String(&token, "token", "BOKAT_TOKEN", "", "a test partner token (bkp_test_…; required)")
	fs.Bool(&byProvider, "by-provider", "", false, "booking.cancelled by the provider: book test_cancels and move the test clock an hour on")
	positional, err := fs.parse(args)
	if err != nil {
		return err
	}
	events := []string{string(bokat.EventBookingConfirmed), string(bokat.EventBookingCancelled),
		string(bokat.EventBookingRescheduled), string(bokat.EventBookingProviderActionRequired)}
	if len(positional) != 1 || !contains(events, positional[0]) || token == "" {
		return fmt.Errorf("%w: bokat trigger --token TOKEN EVENT, EVENT one of %s", errUsage, strings.Join(events, ", "))
	}
	if !strings.HasPrefix(token, bokat.PartnerTestTokenPrefix) {
		return fmt.Errorf("%w: trigger books real providers with a live token; give a test token (%s…)", errUsage, bokat.PartnerTestTokenPrefix)
	}
	if byProvider && positional[0] != string(bokat.EventBookingCancelled) {
		return fmt.Errorf("%w: --by-provider goes with %s only", errUsage, bokat.EventBookingCancelled)
	}
	c := triggerClient{ctx: ctx, http: &http.Client{Timeout: 10 * time.Second}, baseURL: strings.TrimRight(baseURL, "/"), token: token}
	provider := bokat.TestProviderFree
	switch {
	case positional[0] == string(bokat.EventBookingProviderActionRequired):
		provider = bokat.TestProviderUnreachable
	case byProvider:
		provider = bokat.TestProviderCancels
	}
	o, at, err := c.option(provider, "")
	if err != nil {
		return err
	}
	booking, err := c.post("/v1/bookings", confirmation(o, at))
	if err != nil {
		return err
	}
	id, _ := booking["booking"].(map[string]any)["id"].(string)
	fmt.Fprintf(e.stdout, "confirmed %s with %s\n", id, provider)
	switch bokat.EventType(positional[0]) {
	case bokat.EventBookingCancelled:
		if byProvider {
			// test_cancels cancels an hour after confirmation on the
			// partner's test clock: move it on by that hour.
			clock, err := c.post("/v1/test/clock/advance", map[string]any{"seconds": int64(testrealm.CancelAfter / time.Second)})
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "moved the test clock to %v; %s cancels %s\n", clock["now"], provider, id)
			return nil
		}
		if _, err := c.post("/v1/bookings/"+id+"/cancel", map[string]any{"user_confirmation_confirmed": true,
			"reason": "timing_no_longer_works", "idempotency_key": "trigger-" + uuid.NewString()}); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "cancelled %s\n", id)
	case bokat.EventBookingRescheduled:
		start, _ := o["slot"].(map[string]any)["start_at"].(string)
		next, at, err := c.option(provider, start)
		if err != nil {
			return err
		}
		move := confirmation(next, at)
		for _, k := range []string{"customer", "user_consent_confirmed", "user_consent_statement"} {
			delete(move, k)
		}
		move["user_confirmation_confirmed"] = true
		if _, err := c.post("/v1/bookings/"+id+"/reschedule", move); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "rescheduled %s\n", id)
	case bokat.EventBookingProviderActionRequired:
		fmt.Fprintf(e.stdout, "the provider's message fails; %s follows\n", bokat.EventBookingProviderActionRequired)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// confirmation is the confirmation of option o for a fictional customer,
// who accepted its terms at acceptedAt: the server_time of the search that
// found it, so on the partner's test clock however far it was moved.
func confirmation(o map[string]any, acceptedAt string) map[string]any {
	return map[string]any{
		"booking_option_id":         o["booking_option_id"],
		"customer":                  map[string]any{"name": "Trigger Testsson", "phone": "+46700000000", "email": "trigger@example.se"},
		"service_location":          map[string]any{"country_code": "SE", "address": "Testvägen 1", "postcode": "113 45"},
		"user_consent_confirmed":    true,
		"user_consent_statement":    "Test: the user agreed.",
		"booking_terms_accepted":    true,
		"booking_terms_version":     o["terms"].(map[string]any)["version"],
		"booking_terms_accepted_at": acceptedAt,
		"idempotency_key":           "trigger-" + uuid.NewString(),
	}
}

// option searches the faucet job in 113 45 and returns the first option of
// the provider that does not start at skip, and the search's server_time.
func (c triggerClient) option(provider, skip string) (map[string]any, string, error) {
	res, err := c.post("/v1/booking-options", map[string]any{
		"vertical_id": "vvs", "job_type_id": "install_faucet", "description": "Test: byta köksblandare.",
		"location": map[string]any{"country_code": "SE", "postcode": "113 45"},
		"timing":   map[string]any{"preferred_time_text": "inom två veckor"},
	})
	if err != nil {
		return nil, "", err
	}
	at, _ := res["server_time"].(string)
	opts, _ := res["options"].([]any)
	for _, o := range opts {
		o, _ := o.(map[string]any)
		p, _ := o["provider"].(map[string]any)
		slot, _ := o["slot"].(map[string]any)
		if p["id"] == provider && slot["start_at"] != skip {
			return o, at, nil
		}
	}
	return nil, "", fmt.Errorf("no option of %s found: is the server's test realm seeded?", provider)
}

// post sends a JSON body with the token and returns the 2xx answer.
func (c triggerClient) post(path string, body any) (map[string]any, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.baseURL+path, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("POST %s: %s: %s", path, resp.Status, text)
	}
	var out map[string]any
	if err := json.Unmarshal(text, &out); err != nil {
		return nil, fmt.Errorf("POST %s: %w", path, err)
	}
	return out, nil
}
