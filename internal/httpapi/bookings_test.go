package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/clocktest"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
)

// The customer of every test confirmation; none of it may leave the store
// except in notifications.
var testCustomerPII = []string{"Greta", "Gåsfot", "+46701234567", "greta.gasfot@example.se", "Drottninggatan 1", "Vasagatan 9"}

func testCustomer() map[string]any {
	return map[string]any{"name": "Greta Gåsfot", "phone": "+46701234567", "email": "greta.gasfot@example.se"}
}

// options searches and returns the options of the search body.
func (e *testEnv) options(t testing.TB, body map[string]any) []map[string]any {
	t.Helper()
	r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: body})
	if r.Status != 200 {
		t.Fatalf("search: %d %s", r.Status, r.Body)
	}
	var out []map[string]any
	for _, o := range r.JSON["options"].([]any) {
		out = append(out, o.(map[string]any))
	}
	if len(out) == 0 {
		t.Fatalf("search found no options: %s", r.Body)
	}
	return out
}

// nextOption searches again and returns the first option of the provider
// (searches skip busy slots), or fails.
func (e *testEnv) nextOption(t testing.TB, provider string) map[string]any {
	t.Helper()
	for _, o := range e.options(t, faucetSearch()) {
		if optionProvider(o) == provider {
			return o
		}
	}
	t.Fatalf("no option of %s", provider)
	return nil
}

func optionTerms(o map[string]any) string { return o["terms"].(map[string]any)["version"].(string) }
func optionProvider(o map[string]any) string {
	return o["provider"].(map[string]any)["id"].(string)
}
func optionStart(o map[string]any) string { return o["slot"].(map[string]any)["start_at"].(string) }

// confirmBody confirms option o for the test customer in 113 45.
func confirmBody(o map[string]any, key string) map[string]any {
	return map[string]any{
		"spec_version":              "public_bookings_api_v1",
		"booking_option_id":         o["booking_option_id"],
		"customer":                  testCustomer(),
		"service_location":          map[string]any{"country_code": "SE", "address": "Drottninggatan 1", "postcode": "113 45"},
		"user_consent_confirmed":    true,
		"user_consent_statement":    "Användaren godkände att uppgifterna delas med utföraren.",
		"booking_terms_accepted":    true,
		"booking_terms_version":     optionTerms(o),
		"booking_terms_accepted_at": termsAcceptedAt(o),
		"idempotency_key":           key,
	}
}

// termsAcceptedAt is when the user accepted o's terms: the moment it was
// issued (now, for an id the test keys did not sign).
func termsAcceptedAt(o map[string]any) string {
	id, _ := o["booking_option_id"].(string)
	c, _ := testOptionKeys.Verify(id, time.Time{})
	if c.IssuedAt.IsZero() {
		return time.Now().Format(time.RFC3339Nano)
	}
	return c.IssuedAt.Format(time.RFC3339Nano)
}

func rescheduleBody(o map[string]any, key string) map[string]any {
	return map[string]any{
		"booking_option_id":           o["booking_option_id"],
		"service_location":            map[string]any{"country_code": "SE", "address": "Drottninggatan 1", "postcode": "113 45"},
		"user_confirmation_confirmed": true,
		"booking_terms_accepted":      true,
		"booking_terms_version":       optionTerms(o),
		"booking_terms_accepted_at":   termsAcceptedAt(o),
		"idempotency_key":             key,
	}
}

func cancelBody(key string) map[string]any {
	return map[string]any{"user_confirmation_confirmed": true, "reason": "timing_no_longer_works", "idempotency_key": key}
}

// confirm confirms o and returns the booking of the 201 answer.
func (e *testEnv) confirm(t testing.TB, o map[string]any, key string) map[string]any {
	t.Helper()
	r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(o, key), Header: bearer(e.token)})
	if r.Status != 201 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	return r.JSON["booking"].(map[string]any)
}

// resign returns o's booking_option_id with its claims changed by mutate,
// signed again with the test key.
func resign(t testing.TB, o map[string]any, mutate func(*booking.OptionClaims)) string {
	t.Helper()
	c, err := testOptionKeys.Verify(o["booking_option_id"].(string), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	mutate(&c)
	c.Nonce = ""
	id, err := testOptionKeys.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// count runs a COUNT(*) query on the env's store.
func (e *testEnv) count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := e.db.R().QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// overlapQuery counts pairs of active booking entries of one provider that overlap.
const overlapQuery = `SELECT COUNT(*) FROM calendar_entries a JOIN calendar_entries b
	ON a.provider_id = b.provider_id AND a.id < b.id
	WHERE a.active AND b.active AND a.kind = 'booking' AND b.kind = 'booking'
	  AND a.start_at < b.end_at AND b.start_at < a.end_at`

func TestConfirmOverHTTP(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		opts := e.options(t, faucetSearch())
		o := opts[0]
		before := time.Now().Add(-time.Second)
		r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(o, "k-confirm-1"), Header: bearer(e.token)})
		if r.Status != 201 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		checkMetadata(t, r, bokat.BookingsContractVersion)
		for k, want := range map[string]any{"ok": true, "spec_version": "public_bookings_api_v1", "booking_created": true,
			"availability_checked": true, "provider_selected": true, "idempotent_replay": false} {
			if r.JSON[k] != want {
				t.Errorf("%s = %v, want %v", k, r.JSON[k], want)
			}
		}
		b := r.JSON["booking"].(map[string]any)
		slot := o["slot"].(map[string]any)
		price := o["price"].(map[string]any)
		want := map[string]any{"status": "confirmed", "provider_id": optionProvider(o), "provider_name": o["provider"].(map[string]any)["name"],
			"service_id": "vvs_install_faucet_standard", "slot_start_at": slot["start_at"], "slot_end_at": slot["end_at"],
			"slot_label": slot["label"], "price_sek": price["amount_sek"], "currency": "SEK", "terms_version": optionTerms(o)}
		for k, v := range want {
			if b[k] != v {
				t.Errorf("booking.%s = %v, want %v", k, b[k], v)
			}
		}
		for _, k := range []string{"customer_confirmation_status", "provider_confirmation_status"} {
			if _, ok := b[k]; ok {
				t.Errorf("booking.%s is set while its message is queued", k)
			}
		}
		confirmedAt, err := time.Parse(time.RFC3339, b["confirmed_at"].(string))
		if err != nil || confirmedAt.Before(before.Truncate(time.Second)) || confirmedAt.After(time.Now()) {
			t.Errorf("confirmed_at = %v", b["confirmed_at"])
		}
		id, requestID := b["id"].(string), r.JSON["request_id"].(string)
		if !strings.HasPrefix(id, "bkg_") || !strings.HasPrefix(requestID, "bkr_") {
			t.Errorf("ids %q / %q", id, requestID)
		}
		delivery := r.JSON["confirmation_delivery"].(map[string]any)
		for _, party := range []string{"customer", "provider", "webhook"} {
			if d, _ := delivery[party].(map[string]any); d["status"] != "queued" {
				t.Errorf("confirmation_delivery.%s = %v", party, delivery[party])
			}
		}
		step := r.JSON["safe_next_step"].(string)
		for _, s := range []string{id, b["provider_name"].(string), slot["label"].(string), fmt.Sprintf("%v SEK", price["amount_sek"]), "nothing else", "queued"} {
			if !strings.Contains(step, s) {
				t.Errorf("safe_next_step %q lacks %q", step, s)
			}
		}

		// One transaction wrote the booking, its entry, the event and two jobs.
		if n := e.count(t, `SELECT COUNT(*) FROM calendar_entries WHERE booking_id = $1 AND active AND kind = 'booking'`, id); n != 1 {
			t.Errorf("%d active entries", n)
		}
		var eventID, payload string
		if err := e.db.R().QueryRowContext(context.Background(),
			`SELECT id, payload FROM outbox_events WHERE booking_id = $1 AND event_type = 'booking.confirmed'`, id).Scan(&eventID, &payload); err != nil {
			t.Fatalf("outbox event: %v", err)
		}
		var data booking.EventData
		if err := json.Unmarshal([]byte(payload), &data); err != nil || data.RequestID != requestID || data.Booking.ID != id ||
			data.Booking.Status != "confirmed" || float64(data.Booking.PriceSEK) != price["amount_sek"] {
			t.Errorf("event payload %s (%v)", payload, err)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM notification_jobs WHERE booking_id = $1 AND outbox_id = $2 AND status = 'pending'
			AND event_type = 'booking.confirmed' AND recipient IN ('customer', 'provider')`, id, eventID); n != 2 {
			t.Errorf("%d notification jobs", n)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM idempotency_keys WHERE resource_id = $1 AND expires_at IS NULL`, id); n != 1 {
			t.Errorf("%d idempotency records kept for the booking's life", n)
		}

		// A replay answers 200 with the same booking; nothing new is written.
		again := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(o, "k-confirm-1"), Header: bearer(e.token)})
		if again.Status != 200 || again.JSON["idempotent_replay"] != true || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", again.Status, again.Body)
		}
		if got := again.JSON["booking"].(map[string]any)["id"]; got != id || again.JSON["request_id"] != requestID {
			t.Errorf("replay names %v / %v", got, again.JSON["request_id"])
		}
		// The deprecated path is the same operation: same key, same answer.
		legacy := e.do(request{Method: "POST", Path: "/api/public/bookings", Body: confirmBody(o, "k-confirm-1"), Header: bearer(e.token)})
		if legacy.Status != 200 || legacy.JSON["booking"].(map[string]any)["id"] != id || legacy.Header.Get("Deprecation") == "" ||
			legacy.Header.Get("Link") != `<http://bokat.test/v1/bookings>; rel="successor-version"` {
			t.Errorf("legacy replay: %d %v %s", legacy.Status, legacy.Header, legacy.Body)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM bookings`); n != 1 {
			t.Errorf("%d bookings after replays", n)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM outbox_events`); n != 1 {
			t.Errorf("%d outbox events after replays", n)
		}

		// A new confirmation on the deprecated path answers 201.
		nb := e.do(request{Method: "POST", Path: "/api/public/bookings", Body: confirmBody(opts[1], "k-confirm-2"),
			Header: map[string]string{"X-Service-Requests-Token": e.token}})
		if nb.Status != 201 || nb.JSON["booking_created"] != true {
			t.Errorf("legacy confirm: %d %s", nb.Status, nb.Body)
		}
	})
}

func TestConfirmMovingHomeWithDestination(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	o := e.options(t, movingHomeSearch())[0]
	body := confirmBody(o, "k-move")
	body["destination_location"] = map[string]any{"country_code": "SE", "address": "Vasagatan 9", "postcode": "118 22"}
	r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: body, Header: bearer(e.token)})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	nb, err := e.db.NotificationBooking(context.Background(), r.JSON["booking"].(map[string]any)["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if nb.DestinationPostcode != "11822" || nb.Contact.DestinationAddress != "Vasagatan 9" || nb.Contact.ServiceAddress != "Drottninggatan 1" ||
		nb.Contact.FullName() != "Greta Gåsfot" || nb.Contact.Email != "greta.gasfot@example.se" || nb.Contact.Phone != "+46701234567" ||
		nb.ServiceLabelSV == "" || nb.Locale != "sv-SE" || nb.Sequence != 0 || nb.Status != "confirmed" {
		t.Errorf("notification booking = %+v", nb)
	}
}

// TestConfirmErrors covers every error of confirmation through HTTP.
func TestConfirmErrors(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	opts := e.options(t, faucetSearch())
	moving := e.options(t, movingHomeSearch())[0]
	taken := opts[len(opts)-1]
	e.confirm(t, taken, "k-taken")
	// An option whose provider has since changed its price.
	var changing map[string]any
	for _, o := range e.options(t, with(faucetSearch(), func(b map[string]any) {
		b["vertical_id"], b["job_type_id"] = "electrician", "electrical_install_dimmer"
	})) {
		if optionProvider(o) == "prv_sthlm_el_1" {
			changing = o
			break
		}
	}
	if changing == nil {
		t.Fatal("no dimmer option of prv_sthlm_el_1")
	}
	cat, _ := loadCatalog()
	if !strings.Contains(string(supply.Demo()), "{service_id: electrician_install_dimmer_standard, price_sek: 1290}") {
		t.Fatal("the demo supply changed; update this test")
	}
	raised := strings.Replace(string(supply.Demo()), "{service_id: electrician_install_dimmer_standard, price_sek: 1290}",
		"{service_id: electrician_install_dimmer_standard, price_sek: 1390}", 1)
	if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](e.db), cat, "raised.yaml", []byte(raised), time.Now()); err != nil {
		t.Fatal(err)
	}
	if optionProvider(changing) != "prv_sthlm_el_1" {
		t.Fatalf("first dimmer option is of %s", optionProvider(changing))
	}
	o := opts[0]
	e.confirm(t, opts[1], "k-used")

	tests := []struct {
		name     string
		path     string
		body     any
		header   map[string]string
		status   int
		code     bokat.Code
		issue    string
		refresh  bool
		nextStep string
	}{
		{name: "consent missing", body: with(confirmBody(o, "k1"), func(b map[string]any) { delete(b, "user_consent_confirmed") }),
			status: 400, code: bokat.CodeConsentRequired, issue: "user_consent_confirmed: must be true"},
		{name: "consent false, other fields wrong too", body: with(confirmBody(o, "k1"), func(b map[string]any) {
			b["user_consent_confirmed"] = false
			b["customer"] = map[string]any{"name": "G"}
		}), status: 400, code: bokat.CodeConsentRequired},
		{name: "consent as a string", body: with(confirmBody(o, "k1"), func(b map[string]any) { b["user_consent_confirmed"] = "true" }),
			status: 400, code: bokat.CodeConsentRequired},
		{name: "body not an object", body: []any{confirmBody(o, "k1")}, status: 400, code: bokat.CodeValidationFailed},
		{name: "terms not accepted", body: with(confirmBody(o, "k1"), func(b map[string]any) { b["booking_terms_accepted"] = false }),
			status: 400, code: bokat.CodeTermsNotAccepted, issue: "booking_terms_accepted: must be true"},
		{name: "terms version mismatch", body: with(confirmBody(o, "k1"), func(b map[string]any) {
			b["booking_terms_version"] = "fixed_price_terms_v1:vvs_install_toilet_standard"
		}), status: 400, code: bokat.CodeTermsVersionMismatch},
		{name: "postcode mismatch", body: with(confirmBody(o, "k1"), func(b map[string]any) {
			b["service_location"].(map[string]any)["postcode"] = "114 30"
		}), status: 400, code: bokat.CodePostcodeMismatch, issue: "service_location.postcode: must equal the postcode the option was searched for"},
		{name: "destination postcode mismatch", body: with(confirmBody(moving, "k1"), func(b map[string]any) {
			b["destination_location"] = map[string]any{"country_code": "SE", "address": "Vasagatan 9", "postcode": "118 23"}
		}), status: 400, code: bokat.CodePostcodeMismatch},
		{name: "destination missing", body: confirmBody(moving, "k1"), status: 400, code: bokat.CodeValidationFailed,
			issue: "destination_location: required when the chosen option has a destination"},
		{name: "destination without one in the option", body: with(confirmBody(o, "k1"), func(b map[string]any) {
			b["destination_location"] = map[string]any{"country_code": "SE", "address": "Vasagatan 9", "postcode": "118 22"}
		}), status: 400, code: bokat.CodeValidationFailed},
		{name: "idempotency key missing", body: with(confirmBody(o, "k1"), func(b map[string]any) { delete(b, "idempotency_key") }),
			status: 400, code: bokat.CodeValidationFailed, issue: "idempotency_key: is required"},
		{name: "customer phone missing and e-mail invalid", body: with(confirmBody(o, "k1"), func(b map[string]any) {
			b["customer"] = map[string]any{"name": "Greta Gåsfot", "email": "not-an-address"}
		}), status: 400, code: bokat.CodeValidationFailed},
		{name: "address too short", body: with(confirmBody(o, "k1"), func(b map[string]any) {
			b["service_location"].(map[string]any)["address"] = "X"
		}), status: 400, code: bokat.CodeValidationFailed},
		{name: "option altered", body: with(confirmBody(o, "k1"), func(b map[string]any) {
			// Two characters of the signature changed (never to what they
			// were: about one id in 256 already ends in "AA").
			id := o["booking_option_id"].(string)
			altered := "AA"
			if strings.HasSuffix(id, altered) {
				altered = "BA"
			}
			b["booking_option_id"] = id[:len(id)-2] + altered
		}), status: 400, code: bokat.CodeBookingOptionInvalid},
		{name: "option expired", body: with(confirmBody(o, "k1"), func(b map[string]any) {
			b["booking_option_id"] = resign(t, o, func(c *booking.OptionClaims) {
				c.IssuedAt, c.ExpiresAt = time.Now().Add(-20*time.Minute), time.Now().Add(-5*time.Minute)
			})
		}), status: 409, code: bokat.CodeBookingOptionExpired, refresh: true, nextStep: "Search booking options again"},
		{name: "option changed", body: confirmBody(changing, "k1"), status: 409, code: bokat.CodeBookingOptionChanged, refresh: true},
		{name: "option taken", body: confirmBody(taken, "k1"), status: 409, code: bokat.CodeBookingOptionUnavailable, refresh: true},
		{name: "key reused with another request", body: confirmBody(o, "k-used"), status: 409, code: bokat.CodeIdempotencyKeyReused},
		{name: "no credential", body: confirmBody(o, "k1"), header: map[string]string{}, status: 401, code: bokat.CodeUnauthorized},
		{name: "scope missing", body: confirmBody(o, "k1"), header: bearer(e.partner("reader", bokat.ScopeBookingsRead)),
			status: 403, code: bokat.CodeInsufficientScope},
		{name: "legacy: consent missing", path: "/api/public/bookings", body: with(confirmBody(o, "k1"), func(b map[string]any) {
			b["user_consent_confirmed"] = false
		}), status: 400, code: bokat.CodeConsentRequired},
		{name: "legacy: option expired", path: "/api/public/bookings", body: with(confirmBody(o, "k1"), func(b map[string]any) {
			b["booking_option_id"] = resign(t, o, func(c *booking.OptionClaims) {
				c.IssuedAt, c.ExpiresAt = time.Now().Add(-20*time.Minute), time.Now().Add(-5*time.Minute)
			})
		}), status: 409, code: bokat.CodeBookingOptionExpired, refresh: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = "/v1/bookings"
			}
			header := tc.header
			if header == nil {
				header = bearer(e.token)
			}
			r := e.do(request{Method: "POST", Path: path, Body: tc.body, Header: header})
			if strings.HasPrefix(path, "/api/") {
				if r.Status != tc.status || r.JSON["error"] != string(tc.code) || r.JSON["ok"] != false {
					t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tc.status, tc.code)
				}
			} else {
				checkProblem(t, r, tc.status, tc.code, path)
			}
			if tc.issue != "" && !slices.Contains(r.JSON["issues"].([]any), any(tc.issue)) {
				t.Errorf("issues = %v, want %q", r.JSON["issues"], tc.issue)
			}
			if got := r.JSON["option_refresh_required"] == true; got != tc.refresh {
				t.Errorf("option_refresh_required = %v, want %v", r.JSON["option_refresh_required"], tc.refresh)
			}
			if step, _ := r.JSON["safe_next_step"].(string); !strings.Contains(step, tc.nextStep) {
				t.Errorf("safe_next_step = %q, want it to contain %q", step, tc.nextStep)
			}
			for _, pii := range testCustomerPII {
				if strings.Contains(string(r.Body), pii) {
					t.Errorf("the error echoes %q", pii)
				}
			}
		})
	}
	if n := e.count(t, `SELECT COUNT(*) FROM bookings`); n != 2 {
		t.Errorf("%d bookings, want only the two set up", n)
	}
	if n := e.count(t, `SELECT COUNT(*) FROM idempotency_keys`); n != 2 {
		t.Errorf("%d idempotency records, want only the two set up: failed requests keep no key", n)
	}
}

func TestConfirmReplaysAfterTheOptionExpired(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now())
	e := sqliteEnv(t, func(c *envConfig) { c.Now = clock.Now }).withDemoSupply()
	o := e.options(t, faucetSearch())[0]
	first := e.confirm(t, o, "k-late")
	clock.Advance(time.Hour)
	r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(o, "k-late"), Header: bearer(e.token)})
	if r.Status != 200 || r.JSON["idempotent_replay"] != true || r.JSON["booking"].(map[string]any)["id"] != first["id"] {
		t.Fatalf("retry after expiry: %d %s", r.Status, r.Body)
	}
	r = e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(o, "k-new"), Header: bearer(e.token)})
	checkProblem(t, r, 409, bokat.CodeBookingOptionExpired, "/v1/bookings")
}

func TestConfirmWithoutSigningKeysAnswers503(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t, func(c *envConfig) {
		s, err := booking.NewSearch(booking.Config{Catalog: c.Catalog, Store: c.Store.(*sqlstore.DB)})
		if err != nil {
			t.Fatal(err)
		}
		l, err := booking.NewLifecycle(booking.LifecycleConfig{Store: sqlstore.Bind[booking.Tx](c.Store.(*sqlstore.DB)), Catalog: c.Catalog})
		if err != nil {
			t.Fatal(err)
		}
		c.Search, c.Bookings = s, l
	})
	signed := sqliteEnv(t).withDemoSupply()
	o := signed.options(t, faucetSearch())[0]
	for _, path := range []string{"/v1/bookings", "/api/public/bookings"} {
		r := e.do(request{Method: "POST", Path: path, Body: confirmBody(o, "k1"), Header: bearer(e.token)})
		if r.Status != 503 || r.JSON["error"] != string(bokat.CodeOptionSigningNotConfigured) || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s: %d %v %s", path, r.Status, r.Header, r.Body)
		}
	}
}

func TestBookingStatus(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		o := e.options(t, faucetSearch())[0]
		r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(o, "k1"), Header: bearer(e.token)})
		b := r.JSON["booking"].(map[string]any)
		id, requestID := b["id"].(string), r.JSON["request_id"].(string)
		for _, ref := range []string{id, requestID} {
			s := e.do(request{Method: "GET", Path: "/v1/bookings/" + ref, Header: bearer(e.token)})
			if s.Status != 200 || s.JSON["found"] != true || s.JSON["request_id"] != requestID || s.JSON["current_confirmation_active"] != true ||
				s.JSON["booking_created"] != true || s.JSON["availability_checked"] != true || s.JSON["provider_selected"] != true {
				t.Fatalf("status by %s: %d %s", ref, s.Status, s.Body)
			}
			if got, _ := json.Marshal(s.JSON["booking"]); !jsonEqual(t, got, mustJSON(t, b)) {
				t.Errorf("status booking %s, confirmation booking %s", got, mustJSON(t, b))
			}
			checkMetadata(t, s, bokat.BookingsContractVersion)
		}
		// The deprecated path: same body without current_confirmation_active; the successor names the booking.
		l := e.do(request{Method: "GET", Path: "/api/public/bookings/" + id, Header: bearer(e.token)})
		if l.Status != 200 || l.JSON["found"] != true || l.JSON["current_confirmation_active"] != nil ||
			l.Header.Get("Link") != fmt.Sprintf(`<http://bokat.test/v1/bookings/%s>; rel="successor-version"`, id) {
			t.Errorf("legacy status: %d %v %s", l.Status, l.Header, l.Body)
		}

		// Unknown ids and other callers' bookings look alike: the not-found shape.
		other := e.partner("other", bokat.AllScopes()...)
		for name, c := range map[string]struct{ ref, token string }{
			"unknown":                {"bkg_nope", e.token},
			"another owner":          {id, other},
			"another owner, request": {requestID, other},
		} {
			for _, path := range []string{"/v1/bookings/", "/api/public/bookings/"} {
				s := e.do(request{Method: "GET", Path: path + c.ref, Header: bearer(c.token)})
				if s.Status != 200 || s.JSON["ok"] != true || s.JSON["found"] != false || s.JSON["booking_id"] != c.ref ||
					!strings.Contains(s.JSON["safe_next_step"].(string), "Do not tell the user that a booking exists") {
					t.Errorf("%s on %s: %d %s", name, path, s.Status, s.Body)
				}
				if s.JSON["booking"] != nil {
					t.Errorf("%s: not-found shape carries a booking", name)
				}
			}
		}
		s := e.do(request{Method: "GET", Path: "/v1/bookings/" + id})
		checkProblem(t, s, 401, bokat.CodeUnauthorized, "/v1/bookings/"+id)
		s = e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(e.partner("confirm-only", bokat.ScopeBookingsConfirm))})
		checkProblem(t, s, 403, bokat.CodeInsufficientScope, "/v1/bookings/"+id)
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return bytes.Equal(mustJSON(t, x), mustJSON(t, y))
}

func TestCancelOverHTTP(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		o := e.options(t, faucetSearch())[0]
		b := e.confirm(t, o, "k-book")
		id := b["id"].(string)
		path := "/v1/bookings/" + id + "/cancel"
		body := cancelBody("k-cancel")
		body["notes"] = "Kunden reser bort."
		r := e.do(request{Method: "POST", Path: path, Body: body, Header: bearer(e.token)})
		if r.Status != 200 || r.JSON["status"] != "cancelled" || r.JSON["booking_id"] != id || r.JSON["current_confirmation_active"] != false ||
			r.JSON["idempotent_replay"] != false || r.JSON["booking_created"] != true {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		if d := r.JSON["notification_delivery"].(map[string]any); d["customer"].(map[string]any)["status"] != "queued" {
			t.Errorf("notification_delivery = %v", d)
		}
		// Status shows it; the slot is free; the event and jobs are queued.
		s := e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(e.token)})
		if s.JSON["current_confirmation_active"] != false || s.JSON["booking"].(map[string]any)["status"] != "cancelled" {
			t.Errorf("status after cancel: %s", s.Body)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM calendar_entries WHERE booking_id = $1 AND active`, id); n != 0 {
			t.Errorf("%d active entries after cancel", n)
		}
		var outboxID string
		if err := e.db.R().QueryRowContext(context.Background(),
			`SELECT id FROM outbox_events WHERE booking_id = $1 AND event_type = 'booking.cancelled'`, id).Scan(&outboxID); err != nil {
			t.Fatal(err)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM notification_jobs WHERE outbox_id = $1`, outboxID); n != 2 {
			t.Errorf("%d cancellation jobs", n)
		}
		nb, err := e.db.NotificationBooking(context.Background(), id)
		if err != nil || nb.Sequence != 1 || nb.CancelReason != "timing_no_longer_works" || nb.CancelledAt.IsZero() {
			t.Errorf("after cancel: %+v %v", nb.Booking, err)
		}

		// The same key replays; a new key finds the booking no longer active.
		again := e.do(request{Method: "POST", Path: path, Body: body, Header: bearer(e.token)})
		if again.Status != 200 || again.JSON["idempotent_replay"] != true || again.JSON["cancelled_at"] != r.JSON["cancelled_at"] {
			t.Errorf("replay: %d %s", again.Status, again.Body)
		}
		checkProblem(t, e.do(request{Method: "POST", Path: path, Body: cancelBody("k-cancel-2"), Header: bearer(e.token)}),
			409, bokat.CodeBookingNotActive, path)
		if n := e.count(t, `SELECT COUNT(*) FROM outbox_events WHERE booking_id = $1`, id); n != 2 {
			t.Errorf("%d events, want confirmed and cancelled", n)
		}
	})
}

func TestCancelErrors(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	opts := e.options(t, faucetSearch())
	id := e.confirm(t, opts[0], "k-book")["id"].(string)
	path := "/v1/bookings/" + id + "/cancel"
	other := e.partner("other", bokat.AllScopes()...)
	// A key used to cancel one booking cannot cancel another.
	id2 := e.confirm(t, opts[1], "k-book-2")["id"].(string)
	if r := e.do(request{Method: "POST", Path: "/v1/bookings/" + id2 + "/cancel", Body: cancelBody("k-shared"), Header: bearer(e.token)}); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	tests := []struct {
		name   string
		path   string
		body   map[string]any
		token  string
		status int
		code   bokat.Code
	}{
		{"no fresh confirmation", path, with(cancelBody("k1"), func(b map[string]any) { b["user_confirmation_confirmed"] = false }), "", 400, bokat.CodeConsentRequired},
		{"confirmation missing", path, with(cancelBody("k1"), func(b map[string]any) { delete(b, "user_confirmation_confirmed") }), "", 400, bokat.CodeConsentRequired},
		{"unknown reason", path, with(cancelBody("k1"), func(b map[string]any) { b["reason"] = "bored" }), "", 400, bokat.CodeValidationFailed},
		{"notes too short", path, with(cancelBody("k1"), func(b map[string]any) { b["notes"] = "x" }), "", 400, bokat.CodeValidationFailed},
		{"notes too long", path, with(cancelBody("k1"), func(b map[string]any) { b["notes"] = strings.Repeat("x", 501) }), "", 400, bokat.CodeValidationFailed},
		{"no key", path, with(cancelBody("k1"), func(b map[string]any) { delete(b, "idempotency_key") }), "", 400, bokat.CodeValidationFailed},
		{"unknown booking", "/v1/bookings/bkg_nope/cancel", cancelBody("k1"), "", 404, bokat.CodeBookingNotFound},
		{"another owner's booking", path, cancelBody("k1"), other, 404, bokat.CodeBookingNotFound},
		{"request id is not the booking id", "/v1/bookings/bkr_x/cancel", cancelBody("k1"), "", 404, bokat.CodeBookingNotFound},
		{"key of another booking's cancel", path, cancelBody("k-shared"), "", 409, bokat.CodeIdempotencyKeyReused},
		{"scope missing", path, cancelBody("k1"), e.partner("no-cancel", bokat.ScopeBookingsRead), 403, bokat.CodeInsufficientScope},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = e.token
			}
			checkProblem(t, e.do(request{Method: "POST", Path: tc.path, Body: tc.body, Header: bearer(token)}), tc.status, tc.code, tc.path)
		})
	}
	if s := e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(e.token)}); s.JSON["current_confirmation_active"] != true {
		t.Errorf("a failed cancel changed the booking: %s", s.Body)
	}
}

func TestRescheduleOverHTTP(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		opts := e.options(t, faucetSearch())
		b := e.confirm(t, opts[0], "k-book")
		id := b["id"].(string)
		provider := optionProvider(opts[0])
		var target map[string]any
		for _, o := range e.options(t, faucetSearch()) {
			if optionProvider(o) == provider && optionStart(o) != b["slot_start_at"] {
				target = o
				break
			}
		}
		if target == nil {
			t.Fatal("no other option of the booked provider")
		}
		path := "/v1/bookings/" + id + "/reschedule"
		r := e.do(request{Method: "POST", Path: path, Body: rescheduleBody(target, "k-move"), Header: bearer(e.token)})
		if r.Status != 200 {
			t.Fatalf("reschedule: %d %s", r.Status, r.Body)
		}
		moved := r.JSON["booking"].(map[string]any)
		if moved["id"] != id || moved["slot_start_at"] != optionStart(target) || moved["price_sek"] != target["price"].(map[string]any)["amount_sek"] ||
			moved["status"] != "confirmed" || moved["confirmed_at"] != b["confirmed_at"] || r.JSON["idempotent_replay"] != false ||
			r.JSON["current_confirmation_active"] != true || r.JSON["rescheduled_at"] == nil {
			t.Errorf("rescheduled: %s", r.Body)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM calendar_entries WHERE booking_id = $1`, id); n != 1 {
			t.Errorf("%d entries for the booking", n)
		}
		var start int64
		if err := e.db.R().QueryRowContext(context.Background(), `SELECT start_at FROM calendar_entries WHERE booking_id = $1 AND active`, id).Scan(&start); err != nil {
			t.Fatal(err)
		}
		if want, _ := time.Parse(time.RFC3339, optionStart(target)); start != want.UnixMilli() {
			t.Errorf("entry starts %d, want %d", start, want.UnixMilli())
		}
		nb, _ := e.db.NotificationBooking(context.Background(), id)
		if nb.Sequence != 1 || nb.RescheduledAt.IsZero() {
			t.Errorf("sequence %d rescheduled_at %v", nb.Sequence, nb.RescheduledAt)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM notification_jobs j JOIN outbox_events o ON o.id = j.outbox_id
			WHERE o.booking_id = $1 AND o.event_type = 'booking.rescheduled'`, id); n != 2 {
			t.Errorf("%d reschedule jobs", n)
		}
		again := e.do(request{Method: "POST", Path: path, Body: rescheduleBody(target, "k-move"), Header: bearer(e.token)})
		if again.Status != 200 || again.JSON["idempotent_replay"] != true || again.JSON["rescheduled_at"] != r.JSON["rescheduled_at"] {
			t.Errorf("replay: %d %s", again.Status, again.Body)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM outbox_events WHERE booking_id = $1`, id); n != 2 {
			t.Errorf("%d events after the replay", n)
		}

		// Moving within overlapping time: the booking's own entry does not block it.
		overlapping := resign(t, target, func(c *booking.OptionClaims) {
			c.SlotStart, c.SlotEnd = c.SlotStart.Add(30*time.Minute), c.SlotEnd.Add(30*time.Minute)
		})
		body := rescheduleBody(target, "k-move-2")
		body["booking_option_id"] = overlapping
		r = e.do(request{Method: "POST", Path: path, Body: body, Header: bearer(e.token)})
		if r.Status != 200 {
			t.Fatalf("move by 30 minutes: %d %s", r.Status, r.Body)
		}
		if n := e.count(t, overlapQuery); n != 0 {
			t.Errorf("%d overlapping active entries", n)
		}
		nb, _ = e.db.NotificationBooking(context.Background(), id)
		if nb.Sequence != 2 {
			t.Errorf("sequence %d after two moves", nb.Sequence)
		}
	})
}

func TestRescheduleErrors(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	opts := e.options(t, faucetSearch())
	b := e.confirm(t, opts[0], "k-book")
	id := b["id"].(string)
	path := "/v1/bookings/" + id + "/reschedule"
	var sameProvider, otherProvider map[string]any
	for _, o := range e.options(t, faucetSearch()) {
		switch {
		case optionProvider(o) == optionProvider(opts[0]) && sameProvider == nil:
			sameProvider = o
		case optionProvider(o) != optionProvider(opts[0]) && otherProvider == nil:
			otherProvider = o
		}
	}
	otherService := e.options(t, with(faucetSearch(), func(b map[string]any) { b["job_type_id"] = "install_toilet" }))[0]
	cancelled := e.confirm(t, opts[1], "k-book-2")["id"].(string)
	if r := e.do(request{Method: "POST", Path: "/v1/bookings/" + cancelled + "/cancel", Body: cancelBody("k-c"), Header: bearer(e.token)}); r.Status != 200 {
		t.Fatal(r.Status)
	}
	// A slot of the same provider taken by another booking.
	takenID := e.confirm(t, sameProvider, "k-book-3")["id"].(string)
	if takenID == "" {
		t.Fatal("no booking")
	}
	var free map[string]any
	for _, o := range e.options(t, faucetSearch()) {
		if optionProvider(o) == optionProvider(opts[0]) {
			free = o
			break
		}
	}
	other := e.partner("other", bokat.AllScopes()...)
	tests := []struct {
		name    string
		path    string
		body    map[string]any
		token   string
		status  int
		code    bokat.Code
		refresh bool
	}{
		{"no fresh confirmation", path, with(rescheduleBody(free, "k1"), func(b map[string]any) { b["user_confirmation_confirmed"] = false }), "", 400, bokat.CodeConsentRequired, false},
		{"terms not accepted", path, with(rescheduleBody(free, "k1"), func(b map[string]any) { delete(b, "booking_terms_accepted") }), "", 400, bokat.CodeTermsNotAccepted, false},
		{"terms version mismatch", path, with(rescheduleBody(free, "k1"), func(b map[string]any) { b["booking_terms_version"] = "fixed_price_terms_v1:x" }), "", 400, bokat.CodeTermsVersionMismatch, false},
		{"postcode mismatch", path, with(rescheduleBody(free, "k1"), func(b map[string]any) {
			b["service_location"].(map[string]any)["postcode"] = "11346"
		}), "", 400, bokat.CodePostcodeMismatch, false},
		{"option altered", path, with(rescheduleBody(free, "k1"), func(b map[string]any) { b["booking_option_id"] = "bo1.x.y.zzzzzzzzzzzzzzzzzzzz" }), "", 400, bokat.CodeBookingOptionInvalid, false},
		{"option expired", path, with(rescheduleBody(free, "k1"), func(b map[string]any) {
			b["booking_option_id"] = resign(t, free, func(c *booking.OptionClaims) {
				c.IssuedAt, c.ExpiresAt = time.Now().Add(-20*time.Minute), time.Now().Add(-time.Minute)
			})
		}), "", 409, bokat.CodeBookingOptionExpired, true},
		{"slot taken", path, rescheduleBody(sameProvider, "k1"), "", 409, bokat.CodeBookingOptionUnavailable, true},
		{"another provider", path, rescheduleBody(otherProvider, "k1"), "", 409, bokat.CodeBookingOptionChanged, true},
		{"another service", path, rescheduleBody(otherService, "k1"), "", 409, bokat.CodeBookingOptionChanged, true},
		{"cancelled booking", "/v1/bookings/" + cancelled + "/reschedule", rescheduleBody(free, "k1"), "", 409, bokat.CodeBookingNotActive, false},
		{"unknown booking", "/v1/bookings/bkg_nope/reschedule", rescheduleBody(free, "k1"), "", 404, bokat.CodeBookingNotFound, false},
		{"another owner's booking", path, rescheduleBody(free, "k1"), other, 404, bokat.CodeBookingNotFound, false},
		{"scope missing", path, rescheduleBody(free, "k1"), e.partner("no-move", bokat.ScopeBookingsCancel), 403, bokat.CodeInsufficientScope, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = e.token
			}
			r := e.do(request{Method: "POST", Path: tc.path, Body: tc.body, Header: bearer(token)})
			checkProblem(t, r, tc.status, tc.code, tc.path)
			if got := r.JSON["option_refresh_required"] == true; got != tc.refresh {
				t.Errorf("option_refresh_required = %v", r.JSON["option_refresh_required"])
			}
		})
	}
	s := e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(e.token)})
	if s.JSON["booking"].(map[string]any)["slot_start_at"] != b["slot_start_at"] {
		t.Errorf("a failed reschedule moved the booking: %s", s.Body)
	}
}

// TestSearchSeesBookings: a booked slot is never offered again; a cancelled
// or moved one is.
func TestSearchSeesBookings(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		// offered lists the options of a search narrowed to the few hours
		// from the slot's start, where every free slot is offered (the
		// ranking spreads a wider window's options over days and parts of
		// day, so it need not show one particular slot).
		offered := func(o map[string]any) map[string]bool {
			start, err := time.Parse(time.RFC3339, optionStart(o))
			if err != nil {
				t.Fatal(err)
			}
			start = start.In(schedule.Stockholm())
			text := fmt.Sprintf("%s mellan %d och %d", start.Format("2006-01-02"), start.Hour(), start.Hour()+4)
			m := map[string]bool{}
			for _, o := range e.options(t, with(faucetSearch(), func(b map[string]any) {
				b["timing"] = map[string]any{"preferred_time_text": text}
			})) {
				m[optionProvider(o)+"@"+optionStart(o)] = true
			}
			return m
		}
		opts := e.options(t, faucetSearch())
		first := opts[0]
		slotOf := func(o map[string]any) string { return optionProvider(o) + "@" + optionStart(o) }
		id := e.confirm(t, first, "k1")["id"].(string)
		if offered(first)[slotOf(first)] {
			t.Fatal("a booked slot is offered again")
		}
		// Move it: the old slot comes back, the new one goes.
		var target map[string]any
		for _, o := range e.options(t, faucetSearch()) {
			if optionProvider(o) == optionProvider(first) {
				target = o
				break
			}
		}
		if r := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/reschedule", Body: rescheduleBody(target, "k2"), Header: bearer(e.token)}); r.Status != 200 {
			t.Fatalf("reschedule: %d %s", r.Status, r.Body)
		}
		if old, moved := offered(first)[slotOf(first)], offered(target)[slotOf(target)]; !old || moved {
			t.Errorf("after the move: old slot offered %v, new slot offered %v", old, moved)
		}
		// Cancel it: its slot comes back.
		if r := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/cancel", Body: cancelBody("k3"), Header: bearer(e.token)}); r.Status != 200 {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		if !offered(target)[slotOf(target)] {
			t.Error("a cancelled booking's slot is not offered again")
		}
	})
}

// oauthPrincipals verifies test access tokens "bka_<user>" as delegated
// tokens of one OAuth client for the REST API, and "bka_mcp.<user>" as
// such tokens for the MCP endpoint.
type oauthPrincipals struct{}

func (oauthPrincipals) VerifyAccessToken(_ context.Context, token string) (bokat.Principal, error) {
	user, aud := strings.TrimPrefix(token, "bka_"), bokat.AudienceAPI
	if u, ok := strings.CutPrefix(user, "mcp."); ok {
		user, aud = u, bokat.AudienceMCP
	}
	return bokat.Principal{Kind: bokat.PrincipalOAuth, ClientID: "oc_assistant", UserID: user,
		Scopes: bokat.AllScopes(), Audience: aud}, nil
}

func TestBookingsBelongToTheOAuthUser(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t, withAccessTokens(oauthPrincipals{})).withDemoSupply()
	o := e.options(t, faucetSearch())[0]
	anna, bo := bearer("bka_anna"), bearer("bka_bo")
	r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(o, "k1"), Header: anna})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := r.JSON["booking"].(map[string]any)["id"].(string)
	if s := e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: anna}); s.JSON["found"] != true {
		t.Errorf("owner: %s", s.Body)
	}
	if s := e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bo}); s.JSON["found"] != false {
		t.Errorf("another user of the same client: %s", s.Body)
	}
	if s := e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(e.token)}); s.JSON["found"] != false {
		t.Errorf("a partner: %s", s.Body)
	}
	checkProblem(t, e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/cancel", Body: cancelBody("k2"), Header: bo}),
		404, bokat.CodeBookingNotFound, "/v1/bookings/"+id+"/cancel")
	// The same key of another user is another key: it does not replay Anna's booking.
	r = e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(o, "k1"), Header: bo})
	checkProblem(t, r, 409, bokat.CodeBookingOptionUnavailable, "/v1/bookings")
	// The deprecated paths take partner credentials only.
	l := e.do(request{Method: "GET", Path: "/api/public/bookings/" + id, Header: anna})
	if l.Status != 401 || l.JSON["error"] != "unauthorized" {
		t.Errorf("legacy status with an access token: %d %s", l.Status, l.Body)
	}
	if r := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/cancel", Body: cancelBody("k2"), Header: anna}); r.Status != 200 {
		t.Errorf("owner cancel: %d %s", r.Status, r.Body)
	}
	var owner, user string
	if err := e.db.R().QueryRowContext(context.Background(), `SELECT owner_client_id, owner_user_id FROM bookings WHERE id = $1`, id).Scan(&owner, &user); err != nil ||
		owner != "oc_assistant" || user != "anna" {
		t.Errorf("owner %q/%q %v", owner, user, err)
	}
}

// TestNoContactDataLeaves: the status bodies, events and logs of a whole
// confirm → reschedule → cancel flow carry no customer name, phone, e-mail
// or address.
func TestNoContactDataLeaves(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		o := e.options(t, movingHomeSearch())[0]
		body := confirmBody(o, "k1")
		body["destination_location"] = map[string]any{"country_code": "SE", "address": "Vasagatan 9", "postcode": "118 22"}
		r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: body, Header: bearer(e.token)})
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		id := r.JSON["booking"].(map[string]any)["id"].(string)
		var seen []string
		seen = append(seen, string(r.Body))
		seen = append(seen, string(e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(e.token)}).Body))
		c := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/cancel", Body: cancelBody("k2"), Header: bearer(e.token)})
		if c.Status != 200 {
			t.Fatalf("cancel %d %s", c.Status, c.Body)
		}
		seen = append(seen, string(c.Body))
		seen = append(seen, string(e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(e.token)}).Body))
		seen = append(seen, string(e.do(request{Method: "GET", Path: "/api/public/bookings/" + id, Header: bearer(e.token)}).Body))
		rows, err := e.db.R().QueryContext(context.Background(), `SELECT payload FROM outbox_events`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				t.Fatal(err)
			}
			seen = append(seen, p)
		}
		rows.Close()
		feed := e.do(request{Method: "GET", Path: feedPath(e, optionProvider(o)), NoValidate: true})
		seen = append(seen, string(feed.Body))
		seen = append(seen, e.logs.String())
		for i, s := range seen {
			for _, pii := range testCustomerPII {
				if strings.Contains(s, pii) {
					t.Errorf("output %d contains %q", i, pii)
				}
			}
		}
		if len(e.logs.String()) == 0 {
			t.Error("no logs were written")
		}
		// The notification lookup is the one place it is read back.
		nb, err := e.db.NotificationBooking(context.Background(), id)
		if err != nil || nb.Contact.Email != "greta.gasfot@example.se" {
			t.Errorf("notification booking %v", err)
		}
	})
}

// asyncDo is e.do for many goroutines: it reports failures as errors.
func (e *testEnv) asyncDo(req request) (response, error) {
	raw, err := json.Marshal(req.Body)
	if err != nil {
		return response{}, err
	}
	r, err := http.NewRequest(req.Method, e.http.URL+req.Path, bytes.NewReader(raw))
	if err != nil {
		return response{}, err
	}
	r.Header.Set("Content-Type", "application/json")
	for k, v := range req.Header {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	out := response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	if err := json.Unmarshal(body, &out.JSON); err != nil {
		return out, fmt.Errorf("not JSON: %s", body)
	}
	if err := e.contract.ValidateResponse(context.Background(), r, resp.StatusCode, resp.Header, body); err != nil {
		return out, fmt.Errorf("response %d does not match the contract: %v\n%s", resp.StatusCode, err, body)
	}
	return out, nil
}

// concurrently runs n calls of fn at once and returns their responses.
func concurrently(t *testing.T, n int, fn func(i int) (response, error)) []response {
	t.Helper()
	out := make([]response, n)
	errs := make([]error, n)
	start := make(chan struct{})
	done := make(chan int)
	for i := range n {
		go func() {
			<-start
			out[i], errs[i] = fn(i)
			done <- i
		}()
	}
	close(start)
	for range n {
		<-done
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	return out
}

func TestConcurrentConfirmationsOfOneOption(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		o := e.options(t, faucetSearch())[0]
		const n = 50
		got := concurrently(t, n, func(i int) (response, error) {
			return e.asyncDo(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(o, fmt.Sprintf("key-%d", i)), Header: bearer(e.token)})
		})
		created, conflicts := 0, 0
		for _, r := range got {
			switch {
			case r.Status == 201:
				created++
			case r.Status == 409 && r.JSON["code"] == string(bokat.CodeBookingOptionUnavailable) && r.JSON["option_refresh_required"] == true:
				conflicts++
			default:
				t.Errorf("unexpected answer %d %s", r.Status, r.Body)
			}
		}
		if created != 1 || conflicts != n-1 {
			t.Errorf("%d created, %d conflicts; want 1 and %d", created, conflicts, n-1)
		}
		if b := e.count(t, `SELECT COUNT(*) FROM bookings`); b != 1 {
			t.Errorf("%d bookings", b)
		}
		if c := e.count(t, `SELECT COUNT(*) FROM calendar_entries WHERE kind = 'booking' AND active`); c != 1 {
			t.Errorf("%d active booking entries", c)
		}
		if c := e.count(t, `SELECT COUNT(*) FROM idempotency_keys`); c != 1 {
			t.Errorf("%d idempotency records; the losers must keep none", c)
		}
	})
}

func TestConcurrentConfirmationsWithOneKey(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		o := e.options(t, faucetSearch())[0]
		const n = 50
		got := concurrently(t, n, func(int) (response, error) {
			return e.asyncDo(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(o, "one-key"), Header: bearer(e.token)})
		})
		ids := map[any]int{}
		created := 0
		for _, r := range got {
			if r.Status != 201 && r.Status != 200 {
				t.Errorf("answer %d %s", r.Status, r.Body)
				continue
			}
			if r.Status == 201 {
				created++
			}
			if (r.Status == 200) != (r.JSON["idempotent_replay"] == true) {
				t.Errorf("status %d with idempotent_replay %v", r.Status, r.JSON["idempotent_replay"])
			}
			ids[r.JSON["booking"].(map[string]any)["id"]]++
		}
		if created != 1 || len(ids) != 1 {
			t.Errorf("%d created, booking ids %v; want one booking named by every answer", created, ids)
		}
		if b := e.count(t, `SELECT COUNT(*) FROM bookings`); b != 1 {
			t.Errorf("%d bookings", b)
		}
	})
}

// TestConfirmAndRescheduleRaceIntoOneSlot: a new confirmation and the move
// of an existing booking into the same slot never leave two active
// overlapping entries.
func TestConfirmAndRescheduleRaceIntoOneSlot(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		first := e.options(t, faucetSearch())[0]
		provider := optionProvider(first)
		id := e.confirm(t, first, "k-book")["id"].(string)
		for round := range 8 {
			var target map[string]any
			for _, o := range e.options(t, faucetSearch()) {
				if optionProvider(o) == provider {
					target = o
					break
				}
			}
			if target == nil {
				t.Fatalf("round %d: no option of %s", round, provider)
			}
			got := concurrently(t, 2, func(i int) (response, error) {
				if i == 0 {
					return e.asyncDo(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(target, fmt.Sprintf("c-%d", round)), Header: bearer(e.token)})
				}
				return e.asyncDo(request{Method: "POST", Path: "/v1/bookings/" + id + "/reschedule",
					Body: rescheduleBody(target, fmt.Sprintf("r-%d", round)), Header: bearer(e.token)})
			})
			ok := 0
			for _, r := range got {
				switch {
				case r.Status == 201 || r.Status == 200:
					ok++
				case r.Status == 409 && r.JSON["code"] == string(bokat.CodeBookingOptionUnavailable):
				default:
					t.Errorf("round %d: %d %s", round, r.Status, r.Body)
				}
			}
			if ok != 1 {
				t.Errorf("round %d: %d successes, want exactly 1", round, ok)
			}
			if n := e.count(t, overlapQuery); n != 0 {
				t.Fatalf("round %d: %d overlapping active entries", round, n)
			}
		}
	})
}

func TestStoreRefusesOverlappingBookingEntries(t *testing.T) {
	t.Parallel()
	// The database itself holds the rule, whatever code writes.
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		opts := e.options(t, faucetSearch())
		first := e.confirm(t, opts[0], "k1")["id"].(string)
		second := e.confirm(t, e.nextOption(t, optionProvider(opts[0])), "k2")["id"].(string)
		move := func(active bool) error {
			return e.db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
				_, err := tx.Q().ExecContext(context.Background(), `UPDATE calendar_entries
					SET start_at = (SELECT start_at + 60000 FROM calendar_entries WHERE booking_id = $1),
					    end_at = (SELECT end_at + 60000 FROM calendar_entries WHERE booking_id = $1), active = $3
					WHERE booking_id = $2`, first, second, active)
				return sqlstore.Translate(err)
			})
		}
		if err := move(true); !errors.Is(err, bokat.ErrConflict) {
			t.Fatalf("moving an active entry over another: err = %v, want a conflict", err)
		}
		if err := move(false); err != nil {
			t.Fatalf("an inactive entry may overlap: %v", err)
		}
		if err := move(true); !errors.Is(err, bokat.ErrConflict) {
			t.Fatalf("reactivating an overlapping entry: err = %v, want a conflict", err)
		}
	})
}
