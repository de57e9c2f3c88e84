package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bokat"
)

var (
	uuidRe    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	traceIDRe = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// checkMetadata asserts the four metadata fields of every response.
func checkMetadata(t *testing.T, r response, wantContract string) {
	t.Helper()
	if id, _ := r.JSON["api_request_id"].(string); !uuidRe.MatchString(id) {
		t.Errorf("api_request_id = %v, want a UUID", r.JSON["api_request_id"])
	} else if r.Header.Get("X-Request-Id") != id {
		t.Errorf("X-Request-Id = %q, want %q", r.Header.Get("X-Request-Id"), id)
	}
	if tr, _ := r.JSON["trace_id"].(string); !traceIDRe.MatchString(tr) {
		t.Errorf("trace_id = %v, want 32 lowercase hex", r.JSON["trace_id"])
	}
	if got := r.JSON["contract_version"]; got != wantContract {
		t.Errorf("contract_version = %v, want %s", got, wantContract)
	}
	// Current on the server's clock: between the request and its answer,
	// however long a busy machine took.
	st, _ := r.JSON["server_time"].(string)
	if ts, err := time.Parse(time.RFC3339Nano, st); err != nil || ts.Before(r.sent) || ts.After(r.received) {
		t.Errorf("server_time = %q, want an RFC 3339 time between %s and %s", st, r.sent.UTC().Format(time.RFC3339Nano), r.received.UTC().Format(time.RFC3339Nano))
	}
}

// checkProblem asserts the Problem shape of a v1 error.
func checkProblem(t *testing.T, r response, status int, code bokat.Code, path string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	want := map[string]any{
		"type": "http://bokat.test/problems/" + string(code), "status": float64(status),
		"code": string(code), "ok": false, "instance": path,
	}
	for k, v := range want {
		if r.JSON[k] != v {
			t.Errorf("%s = %v, want %v", k, r.JSON[k], v)
		}
	}
	for _, k := range []string{"title", "detail"} {
		if s, _ := r.JSON[k].(string); s == "" {
			t.Errorf("%s is empty", k)
		}
	}
	checkMetadata(t, r, bokat.BookingsContractVersion)
}

func TestCapabilitiesServeTheWholeCatalogWithMetadata(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	cat, _ := loadCatalog()
	r := e.do(request{Method: "GET", Path: "/v1/capabilities"})
	if r.Status != 200 || r.JSON["ok"] != true || r.JSON["spec_version"] != "public_requests_api_v1" {
		t.Fatalf("capabilities: %d %s", r.Status, r.Body)
	}
	checkMetadata(t, r, bokat.RequestsContractVersion)
	verticals := r.JSON["supported_verticals"].([]any)
	if len(verticals) != len(cat.Verticals) {
		t.Fatalf("%d verticals, want %d", len(verticals), len(cat.Verticals))
	}
	seen := 0
	for i, v := range verticals {
		vm := v.(map[string]any)
		want := cat.Verticals[i]
		if vm["vertical_id"] != want.ID || vm["fixed_price_service_count"] != float64(want.FixedPriceServiceCount) ||
			vm["direct_booking_supply"] != "search_required" || vm["agent_status"] != "booking_and_request_supported" {
			t.Errorf("vertical %d = %v", i, vm)
		}
		jts := vm["job_types"].([]any)
		if len(jts) != len(want.JobTypes) {
			t.Fatalf("%s: %d job types, want %d", want.ID, len(jts), len(want.JobTypes))
		}
		for j, jt := range jts {
			jm := jt.(map[string]any)
			wj := want.JobTypes[j]
			if jm["job_type_id"] != wj.ID || jm["routing_mode"] != string(wj.RoutingMode) || jm["fixed_price_fit"] != string(wj.FixedPriceFit) {
				t.Errorf("%s/%d = %v", want.ID, j, jm)
			}
			seed, hasSeed := jm["fixed_price_seed"].(map[string]any)
			if hasSeed != (wj.Seed != nil) {
				t.Errorf("%s: seed present = %v, want %v", wj.ID, hasSeed, wj.Seed != nil)
			}
			if hasSeed && (seed["service_id"] != wj.Seed.ServiceID || seed["provider_confirmation_required"] != true || seed["currency"] != "SEK") {
				t.Errorf("%s: seed = %v", wj.ID, seed)
			}
			seen++
		}
	}
	if seen < 50 {
		t.Errorf("only %d job types served", seen)
	}
	for _, k := range []string{"auth", "agent_contract", "required_fields", "geographic_scope", "lifecycle", "booking_lifecycle", "unavailable_verticals"} {
		if r.JSON[k] == nil {
			t.Errorf("capabilities lacks %s", k)
		}
	}
	if geo := r.JSON["geographic_scope"].(map[string]any); geo["country_code"] != "SE" || geo["bookable_only_in_country"] != true {
		t.Errorf("geographic_scope = %v", geo)
	}
	if ep := r.JSON["endpoints"].(map[string]any); ep["confirm_booking"] != "POST /v1/bookings" {
		t.Errorf("endpoints = %v", ep)
	}
	un := r.JSON["unavailable_verticals"].([]any)
	if len(un) != 3 || un[0].(map[string]any)["agent_status"] != "not_bookable_yet" {
		t.Errorf("unavailable_verticals = %v", un)
	}
}

func TestLegacyCapabilitiesNameLegacyPathsAndCarryDeprecationHeaders(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	r := e.do(request{Method: "GET", Path: "/api/public/requests/capabilities"})
	if r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	ep := r.JSON["endpoints"].(map[string]any)
	for _, k := range []string{"search_booking_options", "confirm_booking", "booking_status", "create_request", "capabilities"} {
		if s, _ := ep[k].(string); !strings.Contains(s, " /api/public/") {
			t.Errorf("endpoints.%s = %q, want a legacy path", k, s)
		}
	}
	if r.Header.Get("Deprecation") == "" {
		t.Error("no Deprecation header")
	}
	if l := r.Header.Get("Link"); l != `<http://bokat.test/v1/capabilities>; rel="successor-version"` {
		t.Errorf("Link = %q", l)
	}
}

func TestTraceIDIsTakenFromAValidTraceparentOnly(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	cases := map[string]struct {
		header string
		keep   bool
	}{
		"valid":            {valid, true},
		"upper case":       {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},
		"zero trace id":    {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		"version ff":       {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		"short":            {"00-4bf92f3577b34da6-00f067aa0ba902b7-01", false},
		"garbage":          {"hello", false},
		"absent":           {"", false},
		"zero parent span": {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := map[string]string{}
			if tc.header != "" {
				h["traceparent"] = tc.header
			}
			r := e.do(request{Method: "GET", Path: "/v1/capabilities", Header: h})
			got := r.JSON["trace_id"].(string)
			if tc.keep && got != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("trace_id = %s, want the incoming one", got)
			}
			if !tc.keep && (got == "4bf92f3577b34da6a3ce929d0e0e4736" || !traceIDRe.MatchString(got)) {
				t.Errorf("trace_id = %s, want a fresh one", got)
			}
		})
	}
}

// probeRoutes are test-only routes with the shapes of real operations: a
// scoped, decoding write on the booking-options path (whose schema the
// contract defines) and a route that panics.
func probeRoutes() envOption {
	return func(c *envConfig) {
		c.extraRoutes = func(s *Server) []route {
			return []route{
				{method: "POST", pattern: "/v1/booking-options", auth: authRequired, scope: bokat.ScopeBookingsSearch,
					contract: bokat.BookingsContractVersion, handler: func(w http.ResponseWriter, r *http.Request) error {
						var v map[string]any
						if err := s.decode(r, &v); err != nil {
							return err
						}
						s.writeJSON(w, r, 200, map[string]any{"ok": true})
						return nil
					}},
				{method: "GET", pattern: "/v1/bookings/{booking_id}", auth: authRequired, scope: bokat.ScopeBookingsRead,
					contract: bokat.BookingsContractVersion, handler: func(w http.ResponseWriter, r *http.Request) error {
						if r.PathValue("booking_id") == "panic" {
							panic("probe panic")
						}
						return s.store.Ping(r.Context())
					}},
			}
		}
	}
}

func validSearchBody() map[string]any {
	return map[string]any{
		"vertical_id": "vvs", "job_type_id": "install_faucet", "description": "Byta köksblandare i lägenhet",
		"location": map[string]any{"country_code": "SE", "postcode": "114 32"},
		"timing":   map[string]any{"preferred_time_text": "nästa vecka"},
	}
}

func TestErrorClassesAnswerProblemsWithMetadata(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t, probeRoutes())
	searchOnly := e.partner("search-only", bokat.ScopeBookingsSearch)
	big := strings.Repeat("a", maxBodyBytes+1)

	cases := []struct {
		name   string
		req    request
		status int
		code   bokat.Code
	}{
		{"unknown path", request{Method: "GET", Path: "/v1/nothing-here"}, 404, bokat.CodeNotFound},
		{"wrong method", request{Method: "DELETE", Path: "/v1/capabilities"}, 405, bokat.CodeMethodNotAllowed},
		{"no credential", request{Method: "POST", Path: "/v1/booking-options", Body: validSearchBody()}, 401, bokat.CodeUnauthorized},
		{"unknown token", request{Method: "POST", Path: "/v1/booking-options", Body: validSearchBody(), Header: bearer("bkp_unknown")}, 401, bokat.CodeUnauthorized},
		{"malformed authorization", request{Method: "POST", Path: "/v1/booking-options", Body: validSearchBody(), Header: map[string]string{"Authorization": "Basic abc"}}, 401, bokat.CodeUnauthorized},
		{"two different credentials", request{Method: "POST", Path: "/v1/booking-options", Body: validSearchBody(), Header: map[string]string{"Authorization": "Bearer " + e.token, "X-Service-Requests-Token": searchOnly}}, 401, bokat.CodeUnauthorized},
		{"missing scope", request{Method: "GET", Path: "/v1/bookings/b1", Header: bearer(searchOnly)}, 403, bokat.CodeInsufficientScope},
		{"unknown field", request{Method: "POST", Path: "/v1/booking-options", Body: withField(validSearchBody(), "street", "Storgatan 1"), Header: bearer(e.token)}, 400, bokat.CodeValidationFailed},
		{"malformed JSON", request{Method: "POST", Path: "/v1/booking-options", Body: `{"vertical_id": "vvs",`, Header: bearer(e.token)}, 400, bokat.CodeInvalidRequest},
		{"trailing data", request{Method: "POST", Path: "/v1/booking-options", Body: `{} {}`, Header: bearer(e.token)}, 400, bokat.CodeInvalidRequest},
		{"empty body", request{Method: "POST", Path: "/v1/booking-options", Body: ``, Header: bearer(e.token)}, 400, bokat.CodeInvalidRequest},
		{"oversized body", request{Method: "POST", Path: "/v1/booking-options", Body: `{"description":"` + big + `"}`, Header: bearer(e.token)}, 413, bokat.CodePayloadTooLarge},
		{"wrong content type", request{Method: "POST", Path: "/v1/booking-options", Body: `{}`, ContentType: "text/plain", Header: bearer(e.token)}, 415, bokat.CodeUnsupportedMediaType},
		{"panic", request{Method: "GET", Path: "/v1/bookings/panic", Header: bearer(e.token)}, 500, bokat.CodeInternalError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.NoValidate = tc.status == 405 || tc.status == 413 || tc.status == 415 || tc.status == 404 || tc.status == 500
			r := e.do(tc.req)
			checkProblem(t, r, tc.status, tc.code, tc.req.Path)
			if tc.status == 401 && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer ") {
				t.Errorf("401 without WWW-Authenticate: Bearer")
			}
			if tc.status == 403 && !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="service.bookings.read"`) {
				t.Errorf("403 WWW-Authenticate = %q, want the needed scope", r.Header.Get("WWW-Authenticate"))
			}
			if tc.status == 403 && !strings.Contains(r.JSON["detail"].(string), "service.bookings.read") {
				t.Errorf("403 detail %q does not name the missing scope", r.JSON["detail"])
			}
		})
	}
	if !strings.Contains(e.logs.String(), "probe panic") {
		t.Error("the panic was not logged")
	}
	if strings.Contains(e.logs.String(), e.token) || strings.Contains(e.logs.String(), searchOnly) {
		t.Error("a token appears in the logs")
	}
}

func withField(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}

func TestValidationIssuesNameEachFailingField(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t, probeRoutes())
	body := validSearchBody()
	body["description"] = "kort"
	body["location"] = map[string]any{"country_code": "NO", "postcode": "1234"}
	r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: body, Header: bearer(e.token)})
	checkProblem(t, r, 400, bokat.CodeValidationFailed, "/v1/booking-options")
	issues := fmt.Sprint(r.JSON["issues"])
	for _, field := range []string{"description", "location.country_code", "location.postcode"} {
		if !strings.Contains(issues, field) {
			t.Errorf("issues %s do not name %s", issues, field)
		}
	}
	// The probe route's success body is not a search response: skip the response check.
	ok := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: validSearchBody(), Header: bearer(e.token), NoValidate: true})
	if ok.Status != 200 {
		t.Fatalf("valid body: %d %s", ok.Status, ok.Body)
	}
}

func TestPartnerCredentialsOnEachEngine(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		searchOnly := e.partner("search-only", bokat.ScopeBookingsSearch)
		for name, h := range map[string]map[string]string{
			"bearer":           bearer(e.token),
			"header":           {"X-Service-Requests-Token": e.token},
			"both, same token": {"X-Service-Requests-Token": e.token, "Authorization": "Bearer " + e.token},
		} {
			r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: validSearchBody(), Header: h, NoValidate: true})
			if r.Status != 200 {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		r := e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: bearer(searchOnly)})
		checkProblem(t, r, 403, bokat.CodeInsufficientScope, "/v1/bookings/b1")
		r = e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: bearer(e.token + "x")})
		checkProblem(t, r, 401, bokat.CodeUnauthorized, "/v1/bookings/b1")
	}, probeRoutes())
}

func TestUnreachableStoreAnswers503AndRecovers(t *testing.T) {
	t.Parallel()
	flaky := &flakyStore{}
	e := sqliteEnv(t, probeRoutes(), func(c *envConfig) { flaky.inner = c.Store; c.Store = flaky })
	flaky.down.Store(true)
	r := e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: bearer(e.token), NoValidate: true})
	checkProblem(t, r, 503, bokat.CodePersistenceUnavailable, "/v1/bookings/b1")
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	flaky.down.Store(false)
	r = e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: bearer(e.token), NoValidate: true})
	if r.Status != 200 && r.Status != 204 {
		t.Fatalf("after recovery: %d %s", r.Status, r.Body)
	}
}

// flakyStore is the real store behind a switch that makes it unreachable.
type flakyStore struct {
	inner Store
	down  atomic.Bool
}

func (f *flakyStore) PartnerClientCount(ctx context.Context) (int, error) {
	if f.down.Load() {
		return 0, fmt.Errorf("dial: %w", bokat.ErrUnavailable)
	}
	return f.inner.PartnerClientCount(ctx)
}

func (f *flakyStore) Ping(ctx context.Context) error {
	if f.down.Load() {
		return fmt.Errorf("dial: %w", bokat.ErrUnavailable)
	}
	return f.inner.Ping(ctx)
}

func TestEveryCodeHasAProblemPage(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	for code, info := range codes {
		r := e.do(request{Method: "GET", Path: "/problems/" + string(code), NoValidate: true})
		if r.Status != 200 || !strings.Contains(string(r.Body), string(code)) || !strings.Contains(string(r.Body), info.Title) {
			t.Errorf("/problems/%s: %d", code, r.Status)
		}
		if !regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(string(code)) {
			t.Errorf("code %q breaks the pattern", code)
		}
	}
	r := e.do(request{Method: "GET", Path: "/problems/no_such_code", NoValidate: true})
	checkProblem(t, r, 404, bokat.CodeNotFound, "/problems/no_such_code")
}

func TestOpenAPIDocumentIsServed(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	r := e.do(request{Method: "GET", Path: "/v1/openapi.json", NoValidate: true})
	if r.Status != 200 || !strings.HasPrefix(r.JSON["openapi"].(string), "3.1") {
		t.Fatalf("openapi.json: %d", r.Status)
	}
	paths := r.JSON["paths"].(map[string]any)
	for _, p := range []string{"/v1/capabilities", "/v1/booking-options", "/v1/bookings", "/v1/bookings/{booking_id}", "/v1/requests",
		"/v1/webhook-endpoints", "/api/public/bookings"} {
		if paths[p] == nil {
			t.Errorf("openapi.json lacks %s", p)
		}
	}
	// The document is served for this server's base URL, otherwise as
	// written.
	servers, _ := r.JSON["servers"].([]any)
	if len(servers) != 1 || servers[0].(map[string]any)["url"] != "http://bokat.test" {
		t.Errorf("servers = %v, want the base URL http://bokat.test", r.JSON["servers"])
	}
	var written map[string]any
	if err := json.Unmarshal(e.contract.JSON(), &written); err != nil {
		t.Fatal(err)
	}
	delete(written, "servers")
	delete(r.JSON, "servers")
	if !reflect.DeepEqual(written, r.JSON) {
		t.Error("the served document differs from the contract beyond servers")
	}
}
