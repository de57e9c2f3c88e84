package httpapi

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/clocktest"
)

func validRequestBody() map[string]any {
	return map[string]any{
		"vertical_id": "vvs", "job_type_id": "leak_visible",
		"description":            "Det droppar från röret under diskbänken sedan i går kväll.",
		"user_consent_confirmed": true,
		"customer":               map[string]any{"name": "Greta Gåsfot", "phone": "+46701234567", "email": "greta.gasfot@example.se"},
		"location":               map[string]any{"address": "Drottninggatan 1", "postcode": "111 51"},
		"timing":                 map[string]any{"preferred_time_text": "nästa vecka"},
	}
}

func without(m map[string]any, path string) map[string]any {
	parts := strings.Split(path, ".")
	cur := m
	for _, p := range parts[:len(parts)-1] {
		cur = cur[p].(map[string]any)
	}
	delete(cur, parts[len(parts)-1])
	return m
}

func set(m map[string]any, path string, v any) map[string]any {
	parts := strings.Split(path, ".")
	cur := m
	for _, p := range parts[:len(parts)-1] {
		cur = cur[p].(map[string]any)
	}
	cur[parts[len(parts)-1]] = v
	return m
}

func TestCreateRequestStoresAConsentedRequestAndClaimsNothing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		r := e.do(request{Method: "POST", Path: "/v1/requests", Body: validRequestBody(), Header: bearer(e.token)})
		if r.Status != 201 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		checkMetadata(t, r, bokat.RequestsContractVersion)
		for _, flag := range []string{"booking_created", "availability_checked", "provider_selected"} {
			if r.JSON[flag] != false {
				t.Errorf("%s = %v, want false", flag, r.JSON[flag])
			}
		}
		req := r.JSON["request"].(map[string]any)
		if req["status"] != "ready_to_send" || req["taxonomy_confidence"] != "caller_declared" || req["booking_mode"] != "provider_follow_up" ||
			req["persistence_status"] != "stored" || req["persistence_backend"] != string(e.db.Engine()) || req["customer_next_step"] != "contact_me" {
			t.Errorf("request = %v", req)
		}
		if !strings.HasPrefix(req["id"].(string), "req_") || !strings.HasPrefix(req["session_id"].(string), "ses_") {
			t.Errorf("ids = %v / %v", req["id"], req["session_id"])
		}
		step := r.JSON["safe_next_step"].(string)
		if !strings.Contains(step, "NOT a booking") || !strings.Contains(step, "Do not claim") {
			t.Errorf("safe_next_step = %q", step)
		}
		for _, pii := range []string{"Greta", "Gåsfot", "+46701234567", "greta.gasfot", "Drottninggatan"} {
			if strings.Contains(string(r.Body), pii) {
				t.Errorf("response contains customer data %q", pii)
			}
		}
		stored, err := e.db.FollowUpRequest(context.Background(), req["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if stored.Postcode != "111 51" || stored.OwnerClientID == "" || !strings.Contains(string(stored.CustomerJSON), "greta.gasfot@example.se") {
			t.Errorf("stored request = %+v", stored)
		}
		for _, pii := range []string{"greta", "Gåsfot", "46701234567"} {
			if strings.Contains(strings.ToLower(e.logs.String()), strings.ToLower(pii)) {
				t.Errorf("logs contain customer data %q", pii)
			}
		}
	})
}

func TestCreateRequestNeedsConsentFirst(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	for name, body := range map[string]map[string]any{
		"missing":             without(validRequestBody(), "user_consent_confirmed"),
		"false":               set(validRequestBody(), "user_consent_confirmed", false),
		"not a boolean":       set(validRequestBody(), "user_consent_confirmed", "yes"),
		"false, other errors": set(set(validRequestBody(), "user_consent_confirmed", false), "description", "x"),
	} {
		t.Run(name, func(t *testing.T) {
			r := e.do(request{Method: "POST", Path: "/v1/requests", Body: body, Header: bearer(e.token)})
			checkProblemCode(t, r, 400, bokat.CodeConsentRequired, "/v1/requests", bokat.RequestsContractVersion)
			if r.JSON["consent_required_before_create"] != true {
				t.Errorf("consent_required_before_create = %v", r.JSON["consent_required_before_create"])
			}
			if r.JSON["safe_next_step"] == nil {
				t.Error("no safe_next_step")
			}
		})
	}
}

// checkProblemCode is checkProblem for routes of another contract version.
func checkProblemCode(t *testing.T, r response, status int, code bokat.Code, path, contract string) {
	t.Helper()
	if r.Status != status || r.JSON["code"] != string(code) || r.JSON["instance"] != path || r.JSON["ok"] != false {
		t.Fatalf("got %d %v, want %d %s; body %s", r.Status, r.JSON["code"], status, code, r.Body)
	}
	if r.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("Content-Type = %q", r.Header.Get("Content-Type"))
	}
	checkMetadata(t, r, contract)
}

func TestCreateRequestRequiredFields(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	cases := []struct {
		name  string
		body  map[string]any
		issue string
	}{
		{"vertical_id", without(validRequestBody(), "vertical_id"), "vertical_id"},
		{"job_type_id", without(validRequestBody(), "job_type_id"), "job_type_id"},
		{"description", without(validRequestBody(), "description"), "description"},
		{"description too short", set(validRequestBody(), "description", "kort"), "description"},
		{"customer", without(validRequestBody(), "customer"), "customer"},
		{"customer name", without(validRequestBody(), "customer.name"), "customer"},
		{"customer first name only", set(without(validRequestBody(), "customer.name"), "customer.first_name", "Greta"), "customer"},
		{"customer phone", without(validRequestBody(), "customer.phone"), "customer.phone"},
		{"customer email", without(validRequestBody(), "customer.email"), "customer.email"},
		{"customer email format", set(validRequestBody(), "customer.email", "not-an-address"), "customer.email"},
		{"location", without(validRequestBody(), "location"), "location"},
		{"location empty", set(validRequestBody(), "location", map[string]any{}), "location"},
		{"timing", without(validRequestBody(), "timing"), "timing"},
		{"timing empty", set(validRequestBody(), "timing", map[string]any{}), "timing"},
		{"budget too large", set(validRequestBody(), "budget_sek", 10000001), "budget_sek"},
		{"customer_next_step enum", set(validRequestBody(), "customer_next_step", "call_now"), "customer_next_step"},
		{"unknown field", set(validRequestBody(), "street", "x"), "street"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(request{Method: "POST", Path: "/v1/requests", Body: tc.body, Header: bearer(e.token)})
			checkProblemCode(t, r, 400, bokat.CodeValidationFailed, "/v1/requests", bokat.RequestsContractVersion)
			if issues := fmt.Sprint(r.JSON["issues"]); !strings.Contains(issues, tc.issue) {
				t.Errorf("issues %s do not name %s", issues, tc.issue)
			}
		})
	}
	t.Run("first and last name instead of name", func(t *testing.T) {
		body := set(set(without(validRequestBody(), "customer.name"), "customer.first_name", "Greta"), "customer.last_name", "Gåsfot")
		if r := e.do(request{Method: "POST", Path: "/v1/requests", Body: body, Header: bearer(e.token)}); r.Status != 201 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	})
}

func TestCreateRequestRefusesUnavailableVerticalsAndUnknownJobTypes(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	r := e.do(request{Method: "POST", Path: "/v1/requests", Body: set(validRequestBody(), "vertical_id", "painting"), Header: bearer(e.token)})
	checkProblemCode(t, r, 400, bokat.CodeValidationFailed, "/v1/requests", bokat.RequestsContractVersion)
	if s, _ := r.JSON["safe_next_step"].(string); !strings.Contains(s, "Painting") {
		t.Errorf("safe_next_step = %q", s)
	}
	if ids := fmt.Sprint(r.JSON["supported_vertical_ids"]); ids != "[vvs electrician moving cleaning]" {
		t.Errorf("supported_vertical_ids = %s", ids)
	}
	r = e.do(request{Method: "POST", Path: "/v1/requests", Body: set(validRequestBody(), "job_type_id", "cleaning_window"), Header: bearer(e.token)})
	checkProblemCode(t, r, 400, bokat.CodeValidationFailed, "/v1/requests", bokat.RequestsContractVersion)
	if ids := fmt.Sprint(r.JSON["accepted_job_type_ids"]); !strings.Contains(ids, "leak_visible") || strings.Contains(ids, "cleaning_window") {
		t.Errorf("accepted_job_type_ids = %s", ids)
	}
}

func TestCreateRequestIdempotency(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		create := func(body map[string]any, h map[string]string) response {
			t.Helper()
			hh := bearer(e.token)
			for k, v := range h {
				hh[k] = v
			}
			return e.do(request{Method: "POST", Path: "/v1/requests", Body: body, Header: hh})
		}
		idOf := func(r response) string {
			t.Helper()
			if r.Status != 201 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			return r.JSON["request"].(map[string]any)["id"].(string)
		}

		first := idOf(create(validRequestBody(), map[string]string{"Idempotency-Key": "hdr-1"}))
		again := create(validRequestBody(), map[string]string{"Idempotency-Key": "hdr-1"})
		if idOf(again) != first || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("header replay gave %s (replayed=%q), want %s", idOf(again), again.Header.Get("Idempotent-Replayed"), first)
		}

		byBody := idOf(create(set(validRequestBody(), "idempotency_key", "body-1"), nil))
		if byBody == first {
			t.Fatal("a new key replayed another request")
		}
		if got := idOf(create(set(validRequestBody(), "idempotency_key", "body-1"), nil)); got != byBody {
			t.Errorf("body replay gave %s, want %s", got, byBody)
		}
		// The header and the body naming the same key is the same request.
		if got := idOf(create(set(validRequestBody(), "idempotency_key", "body-1"), map[string]string{"Idempotency-Key": "body-1"})); got != byBody {
			t.Errorf("header+body replay gave %s, want %s", got, byBody)
		}

		r := create(set(validRequestBody(), "idempotency_key", "a"), map[string]string{"Idempotency-Key": "b"})
		checkProblemCode(t, r, 400, bokat.CodeIdempotencyKeyConflict, "/v1/requests", bokat.RequestsContractVersion)

		r = create(set(validRequestBody(), "description", "En helt annan beskrivning av jobbet."), map[string]string{"Idempotency-Key": "hdr-1"})
		checkProblemCode(t, r, 409, bokat.CodeIdempotencyKeyReused, "/v1/requests", bokat.RequestsContractVersion)

		// Keys are scoped to the principal: another partner's same key is a new request.
		other := e.partner("other", bokat.ScopeRequestsCreate)
		r = e.do(request{Method: "POST", Path: "/v1/requests", Body: validRequestBody(), Header: map[string]string{"Authorization": "Bearer " + other, "Idempotency-Key": "hdr-1"}})
		if idOf(r) == first {
			t.Error("another principal's key replayed the first principal's request")
		}
	})
}

func TestLegacyRequestCreation(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	r := e.do(request{Method: "POST", Path: "/api/public/requests", Body: validRequestBody(), Header: map[string]string{"X-Service-Requests-Token": e.token}})
	if r.Status != 201 || r.JSON["request"] == nil {
		t.Fatalf("legacy create: %d %s", r.Status, r.Body)
	}
	checkDeprecated(t, r, "/v1/requests")

	r = e.do(request{Method: "POST", Path: "/api/public/requests", Body: without(validRequestBody(), "user_consent_confirmed"), Header: bearer(e.token)})
	checkLegacyError(t, r, 400, "consent_required")
	if r.JSON["consent_required_before_create"] != true {
		t.Error("legacy consent error lacks consent_required_before_create")
	}
	checkDeprecated(t, r, "/v1/requests")

	r = e.do(request{Method: "POST", Path: "/api/public/requests", Body: validRequestBody()})
	checkLegacyError(t, r, 401, "unauthorized")
	checkDeprecated(t, r, "/v1/requests")
}

func checkDeprecated(t *testing.T, r response, successor string) {
	t.Helper()
	if r.Header.Get("Deprecation") == "" {
		t.Error("no Deprecation header")
	}
	if l := r.Header.Get("Link"); !strings.Contains(l, successor+`>; rel="successor-version"`) {
		t.Errorf("Link = %q, want successor %s", l, successor)
	}
}

func checkLegacyError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.Status != status || r.JSON["ok"] != false || r.JSON["error"] != code || r.JSON["status"] != float64(status) {
		t.Fatalf("got %d %s, want %d with error %s", r.Status, r.Body, status, code)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("legacy error Content-Type = %q, want application/json", ct)
	}
	if _, isProblem := r.JSON["type"]; isProblem {
		t.Error("legacy error has the Problem shape")
	}
}

func TestLegacyRequestCreationIn503UntilAPartnerExists(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now())
	e := sqliteEnv(t, func(c *envConfig) { c.Production = true; c.Now = clock.Now })
	if _, err := e.db.R().ExecContext(context.Background(), `UPDATE partner_clients SET revoked_at = 1`); err == nil {
		t.Fatal("the read pool accepted a write")
	}
	revokeAllPartners(t, e)
	r := e.do(request{Method: "POST", Path: "/api/public/requests", Body: validRequestBody(), Header: bearer(e.token)})
	checkLegacyError(t, r, 503, "production_token_not_configured")
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	e.partner("first partner", bokat.ScopeRequestsCreate)
	clock.Advance(partnerCheckInterval) // the server asks the store again after the interval
	r = e.do(request{Method: "POST", Path: "/api/public/requests", Body: validRequestBody(), Header: bearer(e.token)})
	checkLegacyError(t, r, 401, "unauthorized") // the revoked token stays refused

}

func TestCreateRequestHandsTheJobToCoveringProvidersInOneTransaction(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		// install_faucet has a seed: every Stockholm vvs provider may book it directly.
		r := e.do(request{Method: "POST", Path: "/v1/requests", Body: set(validRequestBody(), "job_type_id", "install_faucet"), Header: bearer(e.token)})
		if r.Status != 201 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		req := r.JSON["request"].(map[string]any)
		cands := req["provider_candidates"].([]any)
		if len(cands) < 2 || req["candidate_provider_count"] != float64(len(cands)) {
			t.Fatalf("Stockholm candidates = %v (count %v), want at least 2", cands, req["candidate_provider_count"])
		}
		for _, c := range cands {
			cm := c.(map[string]any)
			if cm["can_receive_request"] != true || cm["direct_booking"] != true || cm["name"] == "" {
				t.Errorf("candidate = %v", cm)
			}
		}
		var jobs int
		err := e.db.R().QueryRowContext(context.Background(),
			`SELECT COUNT(*) FROM notification_jobs WHERE request_id = $1 AND recipient = 'provider' AND status = 'pending'`,
			req["id"]).Scan(&jobs)
		if err != nil || jobs != 1 {
			t.Fatalf("provider notification jobs = %d (%v), want 1", jobs, err)
		}

		// Northern Sweden has no supply: the request is stored with no candidates and no job.
		far := set(validRequestBody(), "location", map[string]any{"input": "Storgatan 3, 981 31 Kiruna"})
		r = e.do(request{Method: "POST", Path: "/v1/requests", Body: far, Header: bearer(e.token)})
		if r.Status != 201 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		req = r.JSON["request"].(map[string]any)
		if req["candidate_provider_count"] != float64(0) || len(req["provider_candidates"].([]any)) != 0 {
			t.Errorf("Kiruna candidates = %v", req["provider_candidates"])
		}
		stored, err := e.db.FollowUpRequest(context.Background(), req["id"].(string))
		if err != nil || stored.Postcode != "981 31" {
			t.Errorf("postcode read from input = %q (%v)", stored.Postcode, err)
		}
	})
}
