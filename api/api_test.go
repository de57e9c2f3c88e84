package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// contract returns the loaded contract, shared by the tests (it is immutable).
func contract(tb testing.TB) *Contract {
	tb.Helper()
	c, err := Load()
	if err != nil {
		tb.Fatalf("Load() error = %v", err)
	}
	return c
}

// Valid base bodies; each call returns a fresh copy.

func searchBody() map[string]any {
	return map[string]any{
		"spec_version": "public_bookings_api_v1",
		"vertical_id":  "vvs",
		"job_type_id":  "install_faucet",
		"description":  "Byta köksblandare, ny blandare finns.",
		"location":     map[string]any{"country_code": "SE", "postcode": "113 45", "city": "Stockholm"},
		"timing":       map[string]any{"preferred_time_text": "Vardag förmiddag"},
		"details":      map[string]any{"anything": "goes"},
		"locale":       "sv-SE",
		"timezone":     "Europe/Stockholm",
	}
}

func movingHomeBody() map[string]any {
	b := searchBody()
	b["vertical_id"] = "moving"
	b["job_type_id"] = "moving_home"
	b["destination_location"] = map[string]any{"country_code": "SE", "postcode": "11822"}
	b["details"] = map[string]any{"home_size_sqm": 58, "boxes": 0, "elevator_origin": true, "elevator_destination": false}
	return b
}

func customer() map[string]any {
	return map[string]any{"name": "Anna Svensson", "phone": "+46701234567", "email": "anna.svensson@example.se"}
}

func confirmBody() map[string]any {
	return map[string]any{
		"spec_version":              "public_bookings_api_v1",
		"booking_option_id":         "bo1.eyJleGFtcGxlIjp0cnVlfQ.c2lnbmF0dXJl",
		"customer":                  customer(),
		"service_location":          map[string]any{"country_code": "SE", "address": "Drottninggatan 1", "postcode": "113 45"},
		"user_consent_confirmed":    true,
		"user_consent_statement":    "Användaren godkände delning.",
		"consent_collected_at":      "2026-03-02T09:14:00+01:00",
		"consent_source":            "chat",
		"booking_terms_accepted":    true,
		"booking_terms_version":     "fixed_price_terms_v1:vvs_install_faucet_standard",
		"booking_terms_accepted_at": "2026-03-02T09:15:00+01:00",
		"source":                    "external_model",
		"external_reference":        "conv-42",
		"idempotency_key":           "7d0c8f4e-5b1a-4c1e-9f55-2f1d3c4b5a69",
	}
}

func createBody() map[string]any {
	return map[string]any{
		"spec_version":           "public_requests_api_v1",
		"vertical_id":            "vvs",
		"job_type_id":            "leak_hidden",
		"description":            "Fuktfläck i taket under badrummet.",
		"user_consent_confirmed": true,
		"customer":               customer(),
		"location":               map[string]any{"postcode": "113 45"},
		"timing":                 map[string]any{"urgency": "inom en vecka"},
		"budget_sek":             5000,
		"details":                map[string]any{"floor": 3},
		"customer_next_step":     "home_visit",
		"idempotency_key":        "req-1",
	}
}

func cancelBody() map[string]any {
	return map[string]any{
		"spec_version":                "public_bookings_api_v1",
		"user_confirmation_confirmed": true,
		"reason":                      "timing_no_longer_works",
		"notes":                       "Kan inte den dagen.",
		"idempotency_key":             "cancel-1",
	}
}

func rescheduleBody() map[string]any {
	return map[string]any{
		"booking_option_id":           "bo1.eyJleGFtcGxlIjp0cnVlfQ.c2lnbmF0dXJl",
		"service_location":            map[string]any{"country_code": "SE", "address": "Drottninggatan 1", "postcode": "11345"},
		"user_confirmation_confirmed": true,
		"booking_terms_accepted":      true,
		"booking_terms_version":       "fixed_price_terms_v1:vvs_install_faucet_standard",
		"booking_terms_accepted_at":   "2026-03-02T09:15:00Z",
		"idempotency_key":             "resched-1",
	}
}

func webhookBody() map[string]any {
	return map[string]any{
		"url":         "https://hooks.example.se/bokat",
		"event_types": []any{"booking.confirmed", "booking.cancelled"},
	}
}

// set sets the value at a dotted path, creating objects on the way.
func set(m map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}

// del removes the value at a dotted path.
func del(m map[string]any, path string) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		m = m[k].(map[string]any)
	}
	delete(m, keys[len(keys)-1])
}

func str(n int) string { return strings.Repeat("a", n) }

// emailOfLength returns a well-formed e-mail address of exactly n bytes.
func emailOfLength(n int) string {
	local := strings.Repeat("l", 64)
	rest := n - len(local) - 1 - len(".se")
	var labels []string
	for rest > 0 {
		size := min(rest, 63)
		if rest-size == 1 { // leave room for a label after the dot
			size--
		}
		labels = append(labels, strings.Repeat("d", size))
		rest -= size
		if rest > 0 {
			rest-- // the dot
		}
	}
	return local + "@" + strings.Join(labels, ".") + ".se"
}

type op struct{ method, path string }

var (
	opSearch       = op{"POST", "/v1/booking-options"}
	opConfirm      = op{"POST", "/v1/bookings"}
	opCreate       = op{"POST", "/v1/requests"}
	opCancel       = op{"POST", "/v1/bookings/bk_123/cancel"}
	opReschedule   = op{"POST", "/v1/bookings/bk_123/reschedule"}
	opWebhook      = op{"POST", "/v1/webhook-endpoints"}
	opLegacySearch = op{"POST", "/api/public/booking-options"}
	opLegacyCreate = op{"POST", "/api/public/requests"}
)

type requestCase struct {
	name   string
	op     op
	body   func() map[string]any
	mutate func(map[string]any)
	header map[string]string
	// want is "" for a valid request, else an issue that must be reported.
	want string
}

func validate(tb testing.TB, o op, body []byte, header map[string]string) []string {
	tb.Helper()
	req := httptest.NewRequest(o.method, o.path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	issues, err := contract(tb).ValidateRequest(context.Background(), req, body)
	if err != nil {
		tb.Fatalf("ValidateRequest(%s %s) error = %v", o.method, o.path, err)
	}
	return issues
}

func runRequestCases(t *testing.T, cases []requestCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := tc.body()
			if tc.mutate != nil {
				tc.mutate(b)
			}
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			got := validate(t, tc.op, raw, tc.header)
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("issues = %q, want none", got)
			case tc.want != "" && !slices.Contains(got, tc.want):
				t.Errorf("issues = %q, want to contain %q", got, tc.want)
			}
		})
	}
}

// lengthCases tests a string field just below, at and above both limits.
func lengthCases(name string, o op, body func() map[string]any, path string, lo, hi int) []requestCase {
	field := path
	minMsg := field + ": must be at least " + plural(lo, "character")
	maxMsg := field + ": must be at most " + plural(hi, "character")
	with := func(n int) func(map[string]any) { return func(m map[string]any) { set(m, path, str(n)) } }
	return []requestCase{
		{name: name + "/below_min", op: o, body: body, mutate: with(lo - 1), want: minMsg},
		{name: name + "/at_min", op: o, body: body, mutate: with(lo)},
		{name: name + "/at_max", op: o, body: body, mutate: with(hi)},
		{name: name + "/above_max", op: o, body: body, mutate: with(hi + 1), want: maxMsg},
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	c := contract(t)
	// The work is done once per process.
	if again, err := Load(); again != c || err != nil {
		t.Errorf("a second Load() = %p, %v; want the first contract %p", again, err, c)
	}
	if got := c.doc.OpenAPI; got != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", got)
	}
	if got := c.doc.Info.Version; got != "1.0.0" {
		t.Errorf("info.version = %q, want 1.0.0", got)
	}

	// The JSON rendering is a valid OpenAPI 3.1 document in its own right.
	js := c.JSON()
	doc, err := openapi3.NewLoader().LoadFromData(js)
	if err != nil {
		t.Fatalf("loading JSON() error = %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validating JSON() error = %v", err)
	}
	// It carries what the YAML says, anchors expanded.
	var generic map[string]any
	if err := json.Unmarshal(js, &generic); err != nil {
		t.Fatal(err)
	}
	webhooks, _ := generic["webhooks"].(map[string]any)
	for _, name := range []string{"booking.confirmed", "booking.rescheduled", "booking.cancelled", "booking.provider_action_required"} {
		hook, _ := webhooks[name].(map[string]any)
		post, _ := hook["post"].(map[string]any)
		if params, _ := post["parameters"].([]any); len(params) != 3 {
			t.Errorf("webhook %s has %d header parameters, want 3", name, len(params))
		}
	}

	// JSON returns a copy.
	js[0] = 'X'
	if c.JSON()[0] != '{' {
		t.Error("JSON() returned the internal slice")
	}
}

func TestOperations(t *testing.T) {
	t.Parallel()
	want := []Operation{
		{"POST", "/api/public/booking-options", "legacySearchBookingOptions", true},
		{"POST", "/api/public/bookings", "legacyConfirmBooking", true},
		{"GET", "/api/public/bookings/{booking_id}", "legacyGetBookingStatus", true},
		{"POST", "/api/public/requests", "legacyCreateRequest", true},
		{"GET", "/api/public/requests/capabilities", "legacyGetCapabilities", true},
		{"POST", "/v1/booking-options", "searchBookingOptions", false},
		{"POST", "/v1/bookings", "confirmBooking", false},
		{"GET", "/v1/bookings/{booking_id}", "getBookingStatus", false},
		{"POST", "/v1/bookings/{booking_id}/booking-options", "searchRescheduleOptions", false},
		{"POST", "/v1/bookings/{booking_id}/cancel", "cancelBooking", false},
		{"POST", "/v1/bookings/{booking_id}/reschedule", "rescheduleBooking", false},
		{"GET", "/v1/capabilities", "getCapabilities", false},
		{"GET", "/v1/events", "listEvents", false},
		{"GET", "/v1/openapi.json", "getOpenAPIDocument", false},
		{"GET", "/v1/provider/blocks", "listProviderBlocks", false},
		{"POST", "/v1/provider/blocks", "addProviderBlock", false},
		{"POST", "/v1/provider/blocks/{block_id}/remove", "removeProviderBlock", false},
		{"GET", "/v1/provider/bookings", "listProviderBookings", false},
		{"GET", "/v1/provider/bookings/{booking_id}", "getProviderBooking", false},
		{"POST", "/v1/provider/bookings/{booking_id}/acknowledge", "acknowledgeProviderBooking", false},
		{"POST", "/v1/provider/bookings/{booking_id}/cancel", "cancelProviderBooking", false},
		{"POST", "/v1/provider/bookings/{booking_id}/flag", "flagProviderBooking", false},
		{"GET", "/v1/provider/calendar-conflicts", "listProviderCalendarConflicts", false},
		{"GET", "/v1/provider/calendars", "listProviderCalendars", false},
		{"POST", "/v1/provider/calendars", "addProviderCalendar", false},
		{"DELETE", "/v1/provider/calendars/{feed_id}", "removeProviderCalendar", false},
		{"PATCH", "/v1/provider/calendars/{feed_id}", "setProviderCalendarRule", false},
		{"GET", "/v1/provider/hours", "getProviderHours", false},
		{"PUT", "/v1/provider/hours", "putProviderHours", false},
		{"PUT", "/v1/provider/pause", "putProviderPause", false},
		{"PUT", "/v1/provider/postcodes", "putProviderPostcodes", false},
		{"GET", "/v1/provider/prices", "getProviderPrices", false},
		{"PUT", "/v1/provider/prices", "putProviderPrices", false},
		{"POST", "/v1/requests", "createRequest", false},
		{"GET", "/v1/test/clock", "getTestClock", false},
		{"POST", "/v1/test/clock/advance", "advanceTestClock", false},
		{"GET", "/v1/test/messages", "listTestMessages", false},
		{"GET", "/v1/webhook-endpoints", "listWebhookEndpoints", false},
		{"POST", "/v1/webhook-endpoints", "createWebhookEndpoint", false},
		{"DELETE", "/v1/webhook-endpoints/{endpoint_id}", "deleteWebhookEndpoint", false},
		{"GET", "/v1/webhook-endpoints/{endpoint_id}/deliveries", "listWebhookDeliveryAttempts", false},
		{"POST", "/v1/webhook-endpoints/{endpoint_id}/disable", "disableWebhookEndpoint", false},
		{"POST", "/v1/webhook-endpoints/{endpoint_id}/enable", "enableWebhookEndpoint", false},
		{"POST", "/v1/webhook-endpoints/{endpoint_id}/recover", "recoverWebhookEndpoint", false},
		{"POST", "/v1/webhook-endpoints/{endpoint_id}/rotate-secret", "rotateWebhookEndpointSecret", false},
		{"POST", "/v1/webhook-events/{outbox_id}/replay", "replayWebhookEvent", false},
	}
	if got := contract(t).Operations(); !slices.Equal(got, want) {
		t.Errorf("Operations() =\n%v\nwant\n%v", got, want)
	}
}

// TestDocumentDeclarations checks declarations a schema test cannot see:
// security, statuses, content types and headers of every operation.
func TestDocumentDeclarations(t *testing.T) {
	t.Parallel()
	c := contract(t)
	type security struct {
		optional bool     // an empty requirement comes first
		schemes  []string // sorted scheme names
		scope    string   // the scope of every scheme
	}
	partner := []string{"partnerBearer", "partnerHeader"}
	all := []string{"oauth2", "partnerBearer", "partnerHeader"}
	prov := []string{"providerBearer"}
	wantSecurity := map[string]security{
		"getCapabilities":               {true, all, "service.capabilities.read"},
		"searchBookingOptions":          {true, all, "service.bookings.search"},
		"confirmBooking":                {false, all, "service.bookings.confirm"},
		"getBookingStatus":              {false, all, "service.bookings.read"},
		"cancelBooking":                 {false, all, "service.bookings.cancel"},
		"rescheduleBooking":             {false, all, "service.bookings.reschedule"},
		"searchRescheduleOptions":       {false, all, "service.bookings.reschedule"},
		"createRequest":                 {false, all, "service.requests.create"},
		"listWebhookEndpoints":          {false, all, "service.webhooks.manage"},
		"createWebhookEndpoint":         {false, all, "service.webhooks.manage"},
		"deleteWebhookEndpoint":         {false, all, "service.webhooks.manage"},
		"enableWebhookEndpoint":         {false, all, "service.webhooks.manage"},
		"rotateWebhookEndpointSecret":   {false, all, "service.webhooks.manage"},
		"listWebhookDeliveryAttempts":   {false, all, "service.webhooks.manage"},
		"recoverWebhookEndpoint":        {false, all, "service.webhooks.manage"},
		"disableWebhookEndpoint":        {false, all, "service.webhooks.manage"},
		"replayWebhookEvent":            {false, all, "service.webhooks.manage"},
		"listEvents":                    {false, all, "service.bookings.read"},
		"listTestMessages":              {false, all, "service.bookings.read"},
		"getTestClock":                  {false, all, "service.bookings.read"},
		"advanceTestClock":              {false, all, "service.bookings.read"},
		"getOpenAPIDocument":            {false, nil, ""},
		"legacyGetCapabilities":         {true, all, "service.capabilities.read"},
		"legacySearchBookingOptions":    {true, all, "service.bookings.search"},
		"legacyConfirmBooking":          {false, partner, "service.bookings.confirm"},
		"legacyGetBookingStatus":        {false, partner, "service.bookings.read"},
		"legacyCreateRequest":           {false, partner, "service.requests.create"},
		"listProviderBookings":          {false, prov, "provider.bookings.read"},
		"getProviderBooking":            {false, prov, "provider.bookings.read"},
		"acknowledgeProviderBooking":    {false, prov, "provider.bookings.write"},
		"flagProviderBooking":           {false, prov, "provider.bookings.write"},
		"cancelProviderBooking":         {false, prov, "provider.bookings.write"},
		"listProviderBlocks":            {false, prov, "provider.calendar.write"},
		"addProviderBlock":              {false, prov, "provider.calendar.write"},
		"removeProviderBlock":           {false, prov, "provider.calendar.write"},
		"getProviderHours":              {false, prov, "provider.supply.write"},
		"putProviderHours":              {false, prov, "provider.supply.write"},
		"getProviderPrices":             {false, prov, "provider.supply.write"},
		"putProviderPrices":             {false, prov, "provider.supply.write"},
		"putProviderPostcodes":          {false, prov, "provider.supply.write"},
		"putProviderPause":              {false, prov, "provider.calendar.write"},
		"listProviderCalendars":         {false, prov, "provider.calendar.write"},
		"addProviderCalendar":           {false, prov, "provider.calendar.write"},
		"setProviderCalendarRule":       {false, prov, "provider.calendar.write"},
		"removeProviderCalendar":        {false, prov, "provider.calendar.write"},
		"listProviderCalendarConflicts": {false, prov, "provider.calendar.write"},
	}
	wantStatuses := map[string][]string{
		"getCapabilities":               {"200"},
		"searchBookingOptions":          {"200", "400", "422", "429", "503"},
		"confirmBooking":                {"200", "201", "400", "401", "409", "429", "503"},
		"getBookingStatus":              {"200", "401"},
		"cancelBooking":                 {"200", "400", "401", "403", "404", "409", "429", "503"},
		"rescheduleBooking":             {"200", "400", "401", "403", "404", "409", "429", "503"},
		"searchRescheduleOptions":       {"200", "400", "401", "403", "404", "409", "429", "503"},
		"createRequest":                 {"201", "400", "401", "429", "503"},
		"listWebhookEndpoints":          {"200", "401", "403", "503"},
		"createWebhookEndpoint":         {"201", "401", "403", "422", "503"},
		"deleteWebhookEndpoint":         {"200", "401", "403", "404", "503"},
		"enableWebhookEndpoint":         {"200", "401", "403", "404", "429", "503"},
		"rotateWebhookEndpointSecret":   {"200", "401", "403", "404", "429", "503"},
		"listWebhookDeliveryAttempts":   {"200", "400", "401", "403", "404", "429", "503"},
		"recoverWebhookEndpoint":        {"202", "400", "401", "403", "404", "409", "429", "503"},
		"disableWebhookEndpoint":        {"200", "401", "403", "404", "429", "503"},
		"replayWebhookEvent":            {"202", "401", "403", "404", "503"},
		"listEvents":                    {"200", "400", "401", "403", "404", "503"},
		"listTestMessages":              {"200", "401", "403", "503"},
		"getTestClock":                  {"200", "401", "403", "503"},
		"advanceTestClock":              {"200", "400", "401", "403", "503"},
		"getOpenAPIDocument":            {"200"},
		"legacyGetCapabilities":         {"200"},
		"legacySearchBookingOptions":    {"200", "400", "422", "429", "503"},
		"legacyConfirmBooking":          {"200", "201", "400", "401", "409", "429", "503"},
		"legacyGetBookingStatus":        {"200", "401"},
		"legacyCreateRequest":           {"201", "400", "401", "429", "503"},
		"listProviderBookings":          {"200", "400", "401", "403", "404"},
		"getProviderBooking":            {"200", "401", "403", "404"},
		"acknowledgeProviderBooking":    {"200", "400", "401", "403", "404", "409", "429"},
		"flagProviderBooking":           {"200", "400", "401", "403", "404", "409", "429"},
		"cancelProviderBooking":         {"200", "400", "401", "403", "404", "409", "429"},
		"listProviderBlocks":            {"200", "401", "403"},
		"addProviderBlock":              {"200", "400", "401", "403", "404", "409", "429"},
		"removeProviderBlock":           {"200", "400", "401", "403", "404", "409", "429"},
		"getProviderHours":              {"200", "401", "403"},
		"putProviderHours":              {"200", "400", "401", "403", "404", "409", "429"},
		"getProviderPrices":             {"200", "401", "403"},
		"putProviderPrices":             {"200", "400", "401", "403", "404", "409", "429"},
		"putProviderPostcodes":          {"200", "400", "401", "403", "404", "409", "429"},
		"putProviderPause":              {"200", "400", "401", "403", "404", "409", "429"},
		"listProviderCalendars":         {"200", "401", "403"},
		"addProviderCalendar":           {"200", "400", "401", "403", "404", "409", "429"},
		"setProviderCalendarRule":       {"200", "400", "401", "403", "404", "409", "429"},
		"removeProviderCalendar":        {"200", "400", "401", "403", "404", "409", "429"},
		"listProviderCalendarConflicts": {"200", "401", "403"},
	}
	for path, item := range c.doc.Paths.Map() {
		for method, o := range item.Operations() {
			t.Run(o.OperationID, func(t *testing.T) {
				legacy := strings.HasPrefix(path, "/api/public/")
				if o.Deprecated != legacy {
					t.Errorf("%s %s deprecated = %v, want %v", method, path, o.Deprecated, legacy)
				}

				ws, ok := wantSecurity[o.OperationID]
				if !ok {
					t.Fatalf("unexpected operation %s", o.OperationID)
				}
				if o.Security == nil {
					t.Fatal("no operation-level security")
				}
				reqs := *o.Security
				if ws.optional {
					if len(reqs) == 0 || len(reqs[0]) != 0 {
						t.Errorf("security does not start with the empty requirement: %v", reqs)
					} else {
						reqs = reqs[1:]
					}
				}
				var schemes []string
				for _, r := range reqs {
					if len(r) != 1 {
						t.Errorf("requirement %v names %d schemes, want 1", r, len(r))
					}
					for name, scopes := range r {
						schemes = append(schemes, name)
						if !slices.Equal(scopes, []string{ws.scope}) {
							t.Errorf("%s scopes = %v, want [%s]", name, scopes, ws.scope)
						}
					}
				}
				slices.Sort(schemes)
				if !slices.Equal(schemes, ws.schemes) {
					t.Errorf("schemes = %v, want %v", schemes, ws.schemes)
				}

				var statuses []string
				for status, ref := range o.Responses.Map() {
					resp := ref.Value
					// Any answer may go to a test credential (issue 25); a
					// test route's successes always do, so there it is required.
					testSuccess := strings.HasPrefix(path, "/v1/test/") && status[0] == '2'
					if h := resp.Headers["Bokat-Mode"]; testSuccess && (h == nil || h.Ref != "#/components/headers/BokatModeTest" || !h.Value.Required) {
						t.Errorf("%s of a test-mode route does not require Bokat-Mode", status)
					} else if h := resp.Headers["Bokat-Mode"]; !testSuccess && (h == nil || h.Ref != "#/components/headers/BokatMode" || h.Value.Required) {
						t.Errorf("%s does not declare the optional shared Bokat-Mode header", status)
					}
					if status == "default" {
						continue
					}
					statuses = append(statuses, status)
					isError := status[0] >= '4'
					ct := "application/json"
					if isError && !legacy {
						ct = "application/problem+json"
					}
					if resp.Content.Get(ct) == nil || len(resp.Content) != 1 {
						t.Errorf("%s content types = %v, want only %s", status, slices.Collect(mapKeys(resp.Content)), ct)
					}
					if status == "429" || status == "503" {
						if h := resp.Headers["Retry-After"]; h == nil || !h.Value.Required {
							t.Errorf("%s does not require Retry-After", status)
						}
					}
					if legacy {
						for _, name := range []string{"Deprecation", "Link"} {
							if h := resp.Headers[name]; h == nil || !h.Value.Required {
								t.Errorf("%s does not require %s", status, name)
							}
						}
					}
				}
				slices.Sort(statuses)
				if want := wantStatuses[o.OperationID]; !slices.Equal(statuses, want) {
					t.Errorf("statuses = %v, want %v", statuses, want)
				}
			})
		}
	}

	t.Run("oauth2", func(t *testing.T) {
		s := c.doc.Components.SecuritySchemes["oauth2"].Value
		flow := s.Flows.AuthorizationCode
		if flow == nil || flow.AuthorizationURL != "/oauth/authorize" || flow.TokenURL != "/oauth/token" || flow.RefreshURL != "/oauth/token" {
			t.Fatalf("authorization code flow = %+v", flow)
		}
		want := []string{
			"service.bookings.cancel", "service.bookings.confirm", "service.bookings.read", "service.bookings.reschedule",
			"service.bookings.search", "service.capabilities.read", "service.requests.create", "service.webhooks.manage",
		}
		got := slices.Sorted(mapKeys(flow.Scopes))
		if !slices.Equal(got, want) {
			t.Errorf("scopes = %v, want %v", got, want)
		}
		h := c.doc.Components.SecuritySchemes["partnerHeader"].Value
		if h.Type != "apiKey" || h.In != "header" || h.Name != "X-Service-Requests-Token" {
			t.Errorf("partnerHeader = %+v", h)
		}
		b := c.doc.Components.SecuritySchemes["partnerBearer"].Value
		if b.Type != "http" || b.Scheme != "bearer" {
			t.Errorf("partnerBearer = %+v", b)
		}
	})
}

// TestDocumentSchemas checks the components every resource of the
// specification has, and that every /v1 response body declares the metadata
// fields.
func TestDocumentSchemas(t *testing.T) {
	t.Parallel()
	c := contract(t)
	schemas := c.doc.Components.Schemas
	for _, name := range []string{
		"Capabilities", "Vertical", "JobType", "FixedPriceSeed", "SearchRequest", "SearchLocation", "Timing",
		"SearchResponse", "BookingOption", "BookingOptionProvider", "BookingOptionService", "BookingOptionSlot",
		"BookingOptionPrice", "BookingOptionScope", "BookingOptionTerms", "Customer", "BookingConfirmationLocation",
		"ConfirmRequest", "ConfirmedBooking", "ConfirmResponse", "BookingStatusNotFound", "BookingStatusFound",
		"BookingStatus", "BookingLifecycleRecord", "CreateRequest", "CreateRequestLocation", "RequestCreated",
		"CancelRequest", "CancelResponse", "RescheduleRequest", "RescheduleResponse", "WebhookEndpoint",
		"WebhookEndpointCreate", "WebhookEndpointCreated", "WebhookEndpointList", "OkResponse",
		"WebhookReplayResponse", "Problem", "PublicRequestError", "Metadata",
	} {
		if schemas[name] == nil {
			t.Errorf("components/schemas/%s is missing", name)
		}
	}

	meta := []string{"api_request_id", "trace_id", "contract_version", "server_time"}
	for _, name := range []string{"Problem", "Capabilities", "Metadata"} {
		for _, field := range meta {
			if !slices.Contains(schemas[name].Value.Required, field) {
				t.Errorf("%s does not require %s", name, field)
			}
		}
	}
	// Response schemas stay open: the metadata rides along on every body.
	for name, ref := range schemas {
		if strings.HasSuffix(name, "Response") || name == "Capabilities" || name == "Problem" {
			if ap := ref.Value.AdditionalProperties.Has; ap != nil && !*ap {
				t.Errorf("%s sets additionalProperties: false", name)
			}
		}
	}

	// declares reports whether every value s accepts declares field.
	var declares func(s *openapi3.Schema, field string) bool
	declares = func(s *openapi3.Schema, field string) bool {
		if s.Properties[field] != nil {
			return true
		}
		for _, sub := range s.AllOf {
			if declares(sub.Value, field) {
				return true
			}
		}
		if len(s.OneOf) == 0 {
			return false
		}
		for _, sub := range s.OneOf {
			if !declares(sub.Value, field) {
				return false
			}
		}
		return true
	}
	for path, item := range c.doc.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/") || path == "/v1/openapi.json" {
			continue
		}
		for method, o := range item.Operations() {
			for status, ref := range o.Responses.Map() {
				for ct, mt := range ref.Value.Content {
					for _, field := range meta {
						if !declares(mt.Schema.Value, field) {
							t.Errorf("%s %s %s %s does not declare %s", method, path, status, ct, field)
						}
					}
				}
			}
		}
	}
}

func mapKeys[M ~map[string]V, V any](m M) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestValidateRequestLimits(t *testing.T) {
	t.Parallel()
	var cases []requestCase
	cases = append(cases, lengthCases("description", opSearch, searchBody, "description", 10, 5000)...)
	cases = append(cases, lengthCases("request_description", opCreate, createBody, "description", 10, 5000)...)
	cases = append(cases, lengthCases("job_type_id", opSearch, searchBody, "job_type_id", 1, 120)...)
	cases = append(cases, lengthCases("confirm_idempotency_key", opConfirm, confirmBody, "idempotency_key", 1, 200)...)
	cases = append(cases, lengthCases("cancel_idempotency_key", opCancel, cancelBody, "idempotency_key", 1, 200)...)
	cases = append(cases, lengthCases("booking_option_id", opConfirm, confirmBody, "booking_option_id", 20, 24000)...)
	cases = append(cases, lengthCases("reschedule_booking_option_id", opReschedule, rescheduleBody, "booking_option_id", 20, 24000)...)
	cases = append(cases, lengthCases("booking_terms_version", opConfirm, confirmBody, "booking_terms_version", 8, 240)...)
	cases = append(cases, lengthCases("user_consent_statement", opConfirm, confirmBody, "user_consent_statement", 8, 500)...)
	cases = append(cases, lengthCases("consent_source", opCreate, createBody, "consent_source", 1, 120)...)
	cases = append(cases, lengthCases("source", opConfirm, confirmBody, "source", 1, 80)...)
	cases = append(cases, lengthCases("external_reference", opConfirm, confirmBody, "external_reference", 1, 160)...)
	cases = append(cases, lengthCases("customer_name", opConfirm, confirmBody, "customer.name", 2, 160)...)
	cases = append(cases, lengthCases("customer_phone", opConfirm, confirmBody, "customer.phone", 5, 80)...)
	cases = append(cases, lengthCases("location_input", opCreate, createBody, "location.input", 2, 500)...)
	cases = append(cases, lengthCases("location_address", opCreate, createBody, "location.address", 2, 500)...)
	cases = append(cases, lengthCases("location_postcode", opCreate, createBody, "location.postcode", 3, 40)...)
	cases = append(cases, lengthCases("confirmation_address", opConfirm, confirmBody, "service_location.address", 4, 500)...)
	cases = append(cases, lengthCases("search_city", opSearch, searchBody, "location.city", 2, 120)...)
	cases = append(cases, lengthCases("preferred_time_text", opSearch, searchBody, "timing.preferred_time_text", 2, 500)...)
	cases = append(cases, lengthCases("urgency", opCreate, createBody, "timing.urgency", 2, 240)...)
	cases = append(cases, lengthCases("locale", opSearch, searchBody, "locale", 2, 32)...)
	cases = append(cases, lengthCases("timezone", opCreate, createBody, "timezone", 2, 80)...)
	cases = append(cases, lengthCases("cancel_notes", opCancel, cancelBody, "notes", 2, 500)...)
	cases = append(cases, lengthCases("legacy_search_description", opLegacySearch, searchBody, "description", 10, 5000)...)

	setTo := func(path string, v any) func(map[string]any) { return func(m map[string]any) { set(m, path, v) } }
	cases = append(cases,
		// first_name and last_name: 1 to 80 once name is absent.
		requestCase{name: "first_name/at_max", op: opConfirm, body: confirmBody, mutate: func(m map[string]any) {
			del(m, "customer.name")
			set(m, "customer.first_name", str(80))
			set(m, "customer.last_name", "S")
		}},
		requestCase{name: "first_name/above_max", op: opConfirm, body: confirmBody, mutate: func(m map[string]any) {
			set(m, "customer.first_name", str(81))
		}, want: "customer.first_name: must be at most 80 characters"},
		requestCase{name: "last_name/below_min", op: opConfirm, body: confirmBody, mutate: setTo("customer.last_name", ""),
			want: "customer.last_name: must be at least 1 character"},

		requestCase{name: "email/at_max", op: opConfirm, body: confirmBody, mutate: setTo("customer.email", emailOfLength(255))},
		requestCase{name: "email/above_max", op: opConfirm, body: confirmBody, mutate: setTo("customer.email", emailOfLength(256)),
			want: "customer.email: must be at most 255 characters"},
		requestCase{name: "email/format", op: opCreate, body: createBody, mutate: setTo("customer.email", "anna.example.se"),
			want: "customer.email: must be a valid e-mail address"},
		requestCase{name: "email/display_name", op: opCreate, body: createBody, mutate: setTo("customer.email", "Anna <anna@example.se>"),
			want: "customer.email: must be a valid e-mail address"},

		requestCase{name: "budget_sek/below_min", op: opCreate, body: createBody, mutate: setTo("budget_sek", -1),
			want: "budget_sek: must be at least 0"},
		requestCase{name: "budget_sek/at_min", op: opCreate, body: createBody, mutate: setTo("budget_sek", 0)},
		requestCase{name: "budget_sek/at_max", op: opCreate, body: createBody, mutate: setTo("budget_sek", 10000000)},
		requestCase{name: "budget_sek/above_max", op: opCreate, body: createBody, mutate: setTo("budget_sek", 10000001),
			want: "budget_sek: must be at most 10000000"},
		requestCase{name: "budget_sek/fraction", op: opCreate, body: createBody, mutate: setTo("budget_sek", 1.5),
			want: "budget_sek: must be an integer"},

		requestCase{name: "postcode/no_space", op: opSearch, body: searchBody, mutate: setTo("location.postcode", "11122")},
		requestCase{name: "postcode/one_space", op: opSearch, body: searchBody, mutate: setTo("location.postcode", "111 22")},
		requestCase{name: "postcode/two_spaces", op: opSearch, body: searchBody, mutate: setTo("location.postcode", "111  22"),
			want: `location.postcode: must match the pattern "^[0-9]{3} ?[0-9]{2}$"`},
		requestCase{name: "postcode/four_digits", op: opSearch, body: searchBody, mutate: setTo("location.postcode", "1112"),
			want: `location.postcode: must match the pattern "^[0-9]{3} ?[0-9]{2}$"`},
		requestCase{name: "postcode/six_digits", op: opSearch, body: searchBody, mutate: setTo("location.postcode", "111223"),
			want: `location.postcode: must match the pattern "^[0-9]{3} ?[0-9]{2}$"`},
		requestCase{name: "postcode/letters", op: opSearch, body: searchBody, mutate: setTo("location.postcode", "SE-11122"),
			want: `location.postcode: must match the pattern "^[0-9]{3} ?[0-9]{2}$"`},
		requestCase{name: "postcode/destination", op: opSearch, body: movingHomeBody, mutate: setTo("destination_location.postcode", "111  22"),
			want: `destination_location.postcode: must match the pattern "^[0-9]{3} ?[0-9]{2}$"`},
		requestCase{name: "postcode/confirmation", op: opConfirm, body: confirmBody, mutate: setTo("service_location.postcode", "1112"),
			want: `service_location.postcode: must match the pattern "^[0-9]{3} ?[0-9]{2}$"`},
		requestCase{name: "postcode/reschedule", op: opReschedule, body: rescheduleBody, mutate: setTo("service_location.postcode", "111 22")},
	)

	// Idempotency-Key header of request creation: 1 to 200 characters.
	for _, o := range []op{opCreate, opLegacyCreate} {
		for _, tc := range []struct {
			n    int
			want string
		}{
			{0, "Idempotency-Key (header): must be at least 1 character"},
			{1, ""},
			{200, ""},
			{201, "Idempotency-Key (header): must be at most 200 characters"},
		} {
			cases = append(cases, requestCase{
				name:   "header_idempotency_key" + o.path + "/" + strconv.Itoa(tc.n),
				op:     o,
				body:   createBody,
				header: map[string]string{"Idempotency-Key": str(tc.n)},
				want:   tc.want,
			})
		}
	}
	runRequestCases(t, cases)
}

func TestValidateRequestClosedObjects(t *testing.T) {
	t.Parallel()
	unknown := func(path string) func(map[string]any) {
		return func(m map[string]any) {
			if path == "" {
				m["foo"] = 1
				return
			}
			set(m, path+".foo", 1)
		}
	}
	want := func(field string) string { return field + `: unknown field "foo"` }
	cases := []requestCase{
		{name: "search", op: opSearch, body: searchBody, mutate: unknown(""), want: want("(root)")},
		{name: "search_location", op: opSearch, body: searchBody, mutate: unknown("location"), want: want("location")},
		{name: "search_destination", op: opSearch, body: movingHomeBody, mutate: unknown("destination_location"), want: want("destination_location")},
		{name: "search_timing", op: opSearch, body: searchBody, mutate: unknown("timing"), want: want("timing")},
		{name: "confirm", op: opConfirm, body: confirmBody, mutate: unknown(""), want: want("(root)")},
		{name: "confirm_customer", op: opConfirm, body: confirmBody, mutate: unknown("customer"), want: want("customer")},
		{name: "confirm_service_location", op: opConfirm, body: confirmBody, mutate: unknown("service_location"), want: want("service_location")},
		{name: "create", op: opCreate, body: createBody, mutate: unknown(""), want: want("(root)")},
		{name: "create_location", op: opCreate, body: createBody, mutate: unknown("location"), want: want("location")},
		{name: "create_customer", op: opCreate, body: createBody, mutate: unknown("customer"), want: want("customer")},
		{name: "create_timing", op: opCreate, body: createBody, mutate: unknown("timing"), want: want("timing")},
		{name: "cancel", op: opCancel, body: cancelBody, mutate: unknown(""), want: want("(root)")},
		{name: "reschedule", op: opReschedule, body: rescheduleBody, mutate: unknown(""), want: want("(root)")},
		{name: "reschedule_service_location", op: opReschedule, body: rescheduleBody, mutate: unknown("service_location"), want: want("service_location")},
		{name: "webhook", op: opWebhook, body: webhookBody, mutate: unknown(""), want: want("(root)")},
		{name: "legacy_create", op: opLegacyCreate, body: createBody, mutate: unknown(""), want: want("(root)")},
		// Open objects stay open.
		{name: "search_details_open", op: opSearch, body: searchBody, mutate: unknown("details")},
		{name: "moving_details_open", op: opSearch, body: movingHomeBody, mutate: unknown("details")},
		{name: "create_details_open", op: opCreate, body: createBody, mutate: unknown("details")},
		// Search carries no contact data.
		{name: "search_no_street_address", op: opSearch, body: searchBody, mutate: func(m map[string]any) { set(m, "location.address", "Drottninggatan 1") },
			want: `location: unknown field "address"`},
		{name: "search_no_customer", op: opSearch, body: searchBody, mutate: func(m map[string]any) { m["customer"] = customer() },
			want: `(root): unknown field "customer"`},
	}
	runRequestCases(t, cases)
}

func TestValidateRequestRules(t *testing.T) {
	t.Parallel()
	setTo := func(path string, v any) func(map[string]any) { return func(m map[string]any) { set(m, path, v) } }
	remove := func(path string) func(map[string]any) { return func(m map[string]any) { del(m, path) } }
	moving := func(job string) func() map[string]any {
		return func() map[string]any {
			b := movingHomeBody()
			b["job_type_id"] = job
			delete(b, "details")
			return b
		}
	}
	const whenHome = ` when vertical_id is "moving" and job_type_id is "moving_home"`
	cases := []requestCase{
		// Base bodies are valid.
		{name: "valid/search", op: opSearch, body: searchBody},
		{name: "valid/moving_home", op: opSearch, body: movingHomeBody},
		{name: "valid/confirm", op: opConfirm, body: confirmBody},
		{name: "valid/create", op: opCreate, body: createBody},
		{name: "valid/cancel", op: opCancel, body: cancelBody},
		{name: "valid/reschedule", op: opReschedule, body: rescheduleBody},
		{name: "valid/webhook", op: opWebhook, body: webhookBody},
		{name: "valid/legacy_search", op: opLegacySearch, body: searchBody},

		// Moving destination and details.
		{name: "moving_home/no_destination", op: opSearch, body: movingHomeBody, mutate: remove("destination_location"),
			want: `destination_location: is required when vertical_id is "moving" and job_type_id is one of "moving_home", "moving_office", "moving_piano"`},
		{name: "moving_office/no_destination", op: opSearch, body: moving("moving_office"), mutate: remove("destination_location"),
			want: `destination_location: is required when vertical_id is "moving" and job_type_id is one of "moving_home", "moving_office", "moving_piano"`},
		{name: "moving_piano/no_destination", op: opSearch, body: moving("moving_piano"), mutate: remove("destination_location"),
			want: `destination_location: is required when vertical_id is "moving" and job_type_id is one of "moving_home", "moving_office", "moving_piano"`},
		{name: "moving_office/no_details_needed", op: opSearch, body: moving("moving_office")},
		{name: "moving_packing/no_destination_needed", op: opSearch, body: moving("moving_packing"), mutate: remove("destination_location")},
		{name: "vvs/no_destination_needed", op: opSearch, body: searchBody},
		{name: "moving_home/no_details", op: opSearch, body: movingHomeBody, mutate: remove("details"), want: "details: is required" + whenHome},
		{name: "moving_home/no_home_size", op: opSearch, body: movingHomeBody, mutate: remove("details.home_size_sqm"),
			want: "details.home_size_sqm: is required" + whenHome},
		{name: "moving_home/no_boxes", op: opSearch, body: movingHomeBody, mutate: remove("details.boxes"), want: "details.boxes: is required" + whenHome},
		{name: "moving_home/no_elevator_origin", op: opSearch, body: movingHomeBody, mutate: remove("details.elevator_origin"),
			want: "details.elevator_origin: is required" + whenHome},
		{name: "moving_home/no_elevator_destination", op: opSearch, body: movingHomeBody, mutate: remove("details.elevator_destination"),
			want: "details.elevator_destination: is required" + whenHome},
		{name: "moving_home/home_size_zero", op: opSearch, body: movingHomeBody, mutate: setTo("details.home_size_sqm", 0),
			want: "details.home_size_sqm: must be greater than 0"},
		{name: "moving_home/home_size_small", op: opSearch, body: movingHomeBody, mutate: setTo("details.home_size_sqm", 0.5)},
		{name: "moving_home/boxes_negative", op: opSearch, body: movingHomeBody, mutate: setTo("details.boxes", -1),
			want: "details.boxes: must be at least 0"},
		{name: "moving_home/boxes_text", op: opSearch, body: movingHomeBody, mutate: setTo("details.boxes", "30"),
			want: "details.boxes: must be an integer"},
		{name: "moving_home/elevator_text", op: opSearch, body: movingHomeBody, mutate: setTo("details.elevator_origin", "yes"),
			want: "details.elevator_origin: must be a boolean"},

		// Customer: name, or first_name and last_name.
		{name: "customer/first_and_last", op: opConfirm, body: confirmBody, mutate: func(m map[string]any) {
			del(m, "customer.name")
			set(m, "customer.first_name", "Anna")
			set(m, "customer.last_name", "Svensson")
		}},
		{name: "customer/no_name", op: opConfirm, body: confirmBody, mutate: remove("customer.name"),
			want: "customer: must include name, or first_name and last_name"},
		{name: "customer/first_only", op: opCreate, body: createBody, mutate: func(m map[string]any) {
			del(m, "customer.name")
			set(m, "customer.first_name", "Anna")
		}, want: "customer: must include name, or last_name"},
		{name: "customer/no_phone", op: opCreate, body: createBody, mutate: remove("customer.phone"), want: "customer.phone: is required"},
		{name: "customer/no_email", op: opCreate, body: createBody, mutate: remove("customer.email"), want: "customer.email: is required"},

		// Timing: at least one of the two.
		{name: "timing/none", op: opSearch, body: searchBody, mutate: setTo("timing", map[string]any{}),
			want: "timing: must include preferred_time_text, or urgency"},
		{name: "timing/urgency_only", op: opSearch, body: searchBody, mutate: setTo("timing", map[string]any{"urgency": "snart"})},
		{name: "timing/both", op: opCreate, body: createBody, mutate: setTo("timing.preferred_time_text", "måndag")},
		{name: "timing/missing", op: opCreate, body: createBody, mutate: remove("timing"), want: "timing: is required"},

		// Request location: at least one of three.
		{name: "request_location/none", op: opCreate, body: createBody, mutate: setTo("location", map[string]any{}),
			want: "location: must include input, or address, or postcode"},
		{name: "request_location/input_only", op: opCreate, body: createBody, mutate: setTo("location", map[string]any{"input": "Södermalm"})},
		{name: "request_location/address_only", op: opCreate, body: createBody, mutate: setTo("location", map[string]any{"address": "Götgatan 1"})},

		// Enums and constants.
		{name: "vertical/not_bookable_yet", op: opCreate, body: createBody, mutate: setTo("vertical_id", "painting"),
			want: `vertical_id: must be one of "vvs", "electrician", "moving", "cleaning"`},
		{name: "country/not_se", op: opSearch, body: searchBody, mutate: setTo("location.country_code", "NO"),
			want: `location.country_code: must be "SE"`},
		{name: "country/confirmation_not_se", op: opConfirm, body: confirmBody, mutate: setTo("service_location.country_code", "DK"),
			want: `service_location.country_code: must be "SE"`},
		{name: "spec_version/wrong", op: opSearch, body: searchBody, mutate: setTo("spec_version", "public_requests_api_v1"),
			want: `spec_version: must be "public_bookings_api_v1"`},
		{name: "spec_version/request", op: opCreate, body: createBody, mutate: setTo("spec_version", "public_bookings_api_v1"),
			want: `spec_version: must be "public_requests_api_v1"`},
		{name: "consent/false", op: opCreate, body: createBody, mutate: setTo("user_consent_confirmed", false),
			want: "user_consent_confirmed: must be true"},
		{name: "consent/missing", op: opConfirm, body: confirmBody, mutate: remove("user_consent_confirmed"),
			want: "user_consent_confirmed: is required"},
		{name: "terms/not_accepted", op: opConfirm, body: confirmBody, mutate: setTo("booking_terms_accepted", false),
			want: "booking_terms_accepted: must be true"},
		{name: "terms/accepted_at_missing", op: opReschedule, body: rescheduleBody, mutate: remove("booking_terms_accepted_at"),
			want: "booking_terms_accepted_at: is required"},
		{name: "confirm/idempotency_key_missing", op: opConfirm, body: confirmBody, mutate: remove("idempotency_key"),
			want: "idempotency_key: is required"},
		{name: "create/idempotency_key_optional", op: opCreate, body: createBody, mutate: remove("idempotency_key")},
		{name: "cancel/not_confirmed", op: opCancel, body: cancelBody, mutate: setTo("user_confirmation_confirmed", false),
			want: "user_confirmation_confirmed: must be true"},
		{name: "cancel/reason", op: opCancel, body: cancelBody, mutate: setTo("reason", "bored"),
			want: `reason: must be one of "customer_changed_mind", "timing_no_longer_works", "booked_elsewhere", "service_no_longer_needed", "other"`},
		{name: "customer_next_step/enum", op: opCreate, body: createBody, mutate: setTo("customer_next_step", "call_me"),
			want: `customer_next_step: must be one of "home_visit", "price_info", "contact_me", "direct_booking"`},

		// Formats.
		{name: "date_time/not_a_date", op: opConfirm, body: confirmBody, mutate: setTo("booking_terms_accepted_at", "yesterday"),
			want: "booking_terms_accepted_at: must be an RFC 3339 date-time with offset (e.g. 2026-03-02T09:15:00+01:00)"},
		{name: "date_time/no_offset", op: opConfirm, body: confirmBody, mutate: setTo("consent_collected_at", "2026-03-02T09:15:00"),
			want: "consent_collected_at: must be an RFC 3339 date-time with offset (e.g. 2026-03-02T09:15:00+01:00)"},
		{name: "date_time/impossible_day", op: opCreate, body: createBody, mutate: setTo("consent_collected_at", "2026-02-30T09:15:00Z"),
			want: "consent_collected_at: must be an RFC 3339 date-time with offset (e.g. 2026-03-02T09:15:00+01:00)"},

		// Webhook registration.
		{name: "webhook/no_event_types", op: opWebhook, body: webhookBody, mutate: setTo("event_types", []any{}),
			want: "event_types: must have at least 1 item"},
		{name: "webhook/duplicate_event_types", op: opWebhook, body: webhookBody,
			mutate: setTo("event_types", []any{"booking.confirmed", "booking.confirmed"}), want: "event_types: must not repeat an item"},
		{name: "webhook/unknown_event_type", op: opWebhook, body: webhookBody,
			mutate: setTo("event_types", []any{"booking.confirmed", "booking.created"}),
			want:   `event_types[1]: must be one of "booking.confirmed", "booking.rescheduled", "booking.cancelled", "booking.provider_action_required"`},
		{name: "webhook/all_event_types", op: opWebhook, body: webhookBody, mutate: setTo("event_types",
			[]any{"booking.confirmed", "booking.rescheduled", "booking.cancelled", "booking.provider_action_required"})},
		{name: "webhook/http", op: opWebhook, body: webhookBody, mutate: setTo("url", "http://hooks.example.se/bokat"),
			want: `url: must match the pattern "^https://"`},
		{name: "webhook/not_a_uri", op: opWebhook, body: webhookBody, mutate: setTo("url", "https://hooks example.se"),
			want: "url: must be an absolute URI"},
		{name: "webhook/url_missing", op: opWebhook, body: webhookBody, mutate: remove("url"), want: "url: is required"},

		// Types.
		{name: "type/description_number", op: opSearch, body: searchBody, mutate: setTo("description", 1234567890),
			want: "description: must be a string"},
		{name: "type/location_string", op: opSearch, body: searchBody, mutate: setTo("location", "113 45"),
			want: "location: must be an object"},
	}
	runRequestCases(t, cases)
}

func TestValidateRequestReportsEveryIssue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		op     op
		body   func() map[string]any
		mutate func(map[string]any)
		want   []string
	}{
		{
			name: "request_creation", op: opCreate, body: createBody,
			mutate: func(b map[string]any) {
				b["description"] = "short"
				set(b, "customer.email", "not-an-address")
				set(b, "customer.phone", "1")
				b["location"] = map[string]any{}
				b["budget_sek"] = -5
				b["user_consent_confirmed"] = false
				b["unexpected"] = true
			},
			want: []string{
				`(root): unknown field "unexpected"`,
				"budget_sek: must be at least 0",
				"customer.email: must be a valid e-mail address",
				"customer.phone: must be at least 5 characters",
				"description: must be at least 10 characters",
				"location: must include input, or address, or postcode",
				"user_consent_confirmed: must be true",
			},
		},
		{
			// A schema without 2020-12 keywords reads the same.
			name: "webhook_registration", op: opWebhook, body: webhookBody,
			mutate: func(b map[string]any) {
				b["url"] = "http://hooks.example.se"
				b["event_types"] = []any{"booking.cancelled", "booking.cancelled", "booking.lost"}
				b["secret"] = "x"
			},
			want: []string{
				`(root): unknown field "secret"`,
				"event_types: must not repeat an item",
				`event_types[2]: must be one of "booking.confirmed", "booking.rescheduled", "booking.cancelled", "booking.provider_action_required"`,
				`url: must match the pattern "^https://"`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := tc.body()
			tc.mutate(b)
			raw, _ := json.Marshal(b)
			if got := validate(t, tc.op, raw, nil); !slices.Equal(got, tc.want) {
				t.Errorf("issues =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestValidateRequestKeepsValuesOut(t *testing.T) {
	t.Parallel()
	const secret = "Hemlig"
	tests := []struct {
		name   string
		op     op
		body   func() map[string]any
		mutate func(map[string]any)
		field  string
	}{
		{"email", opConfirm, confirmBody, func(m map[string]any) { set(m, "customer.email", secret+"@nowhere") }, "customer.email"},
		{"phone", opConfirm, confirmBody, func(m map[string]any) { set(m, "customer.phone", secret[:4]) }, "customer.phone"},
		{"description", opSearch, searchBody, func(m map[string]any) { m["description"] = secret }, "description"},
		{"postcode", opSearch, searchBody, func(m map[string]any) { set(m, "location.postcode", secret) }, "location.postcode"},
		{"address", opConfirm, confirmBody, func(m map[string]any) { set(m, "service_location.address", strings.Repeat(secret, 100)) }, "service_location.address"},
		{"enum", opCreate, createBody, func(m map[string]any) { m["vertical_id"] = secret }, "vertical_id"},
		{"const", opSearch, searchBody, func(m map[string]any) { set(m, "location.country_code", secret) }, "location.country_code"},
		{"date_time", opConfirm, confirmBody, func(m map[string]any) { m["booking_terms_accepted_at"] = secret }, "booking_terms_accepted_at"},
		{"uri", opWebhook, webhookBody, func(m map[string]any) { m["url"] = "https://" + secret + " x" }, "url"},
		{"type", opCreate, createBody, func(m map[string]any) { m["budget_sek"] = secret }, "budget_sek"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := tc.body()
			tc.mutate(b)
			raw, _ := json.Marshal(b)
			got := validate(t, tc.op, raw, nil)
			if len(got) == 0 {
				t.Fatal("no issues, want at least one")
			}
			named := false
			for _, issue := range got {
				if strings.Contains(issue, secret) || strings.Contains(issue, secret[:4]) {
					t.Errorf("issue %q contains the submitted value", issue)
				}
				named = named || strings.HasPrefix(issue, tc.field+": ")
			}
			if !named {
				t.Errorf("issues %q do not name %s", got, tc.field)
			}
		})
	}
}

func TestValidateRequestEnvelope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := contract(t)
	valid, _ := json.Marshal(confirmBody())

	t.Run("body_not_consumed", func(t *testing.T) {
		t.Parallel()
		req := httptest.NewRequest("POST", "/v1/bookings", bytes.NewReader(valid))
		req.Header.Set("Content-Type", "application/json")
		if issues, err := c.ValidateRequest(ctx, req, valid); err != nil || issues != nil {
			t.Fatalf("ValidateRequest() = %q, %v; want no issues", issues, err)
		}
		rest, err := io.ReadAll(req.Body)
		if err != nil || !bytes.Equal(rest, valid) {
			t.Errorf("r.Body after validation = %q, %v; want the untouched body", rest, err)
		}
	})
	t.Run("no_credentials_needed", func(t *testing.T) {
		t.Parallel()
		// The server checks credentials itself; validation ignores security.
		req := httptest.NewRequest("POST", "/api/public/bookings", nil)
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		if issues, err := c.ValidateRequest(ctx, req, valid); err != nil || issues != nil {
			t.Fatalf("ValidateRequest() = %q, %v; want no issues", issues, err)
		}
	})

	tests := []struct {
		name, method, path, contentType string
		body                            []byte
		want                            []string
	}{
		{"empty_body", "POST", "/v1/bookings", "application/json", nil, []string{"(body): a JSON request body is required"}},
		{"invalid_json", "POST", "/v1/bookings", "application/json", []byte(`{"customer":`), []string{"(body): must be valid JSON"}},
		{"array_body", "POST", "/v1/bookings", "application/json", []byte(`[]`), []string{"(root): must be an object"}},
		{"wrong_content_type", "POST", "/v1/bookings", "text/plain", valid, []string{"Content-Type (header): must be application/json"}},
		{"endpoint_id_not_uuid", "DELETE", "/v1/webhook-endpoints/42", "", nil,
			[]string{`endpoint_id (path): must match the pattern "^(whe_[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$"`}},
		{"endpoint_id_prefixed", "DELETE", "/v1/webhook-endpoints/whe_019ac2e5b3f07c4e9a1d2b3c4d5e6f70", "", nil, nil},
		{"endpoint_id_legacy_uuid", "DELETE", "/v1/webhook-endpoints/0b6c0f8e-8d53-4c52-a5f0-7c6b1e0f2a11", "", nil, nil},
		{"outbox_id_not_uuid", "POST", "/v1/webhook-events/abc/replay", "", nil,
			[]string{"outbox_id (path): must be a UUID (e.g. 0b6c0f8e-8d53-4c52-a5f0-7c6b1e0f2a11)"}},
		{"outbox_id_uuid", "POST", "/v1/webhook-events/0B6C0F8E-8D53-4C52-A5F0-7C6B1E0F2A11/replay", "", nil, nil},
		{"status_read", "GET", "/v1/bookings/bk_123", "", nil, nil},
		{"capabilities", "GET", "/v1/capabilities", "", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			got, err := c.ValidateRequest(ctx, req, tc.body)
			if err != nil {
				t.Fatalf("ValidateRequest() error = %v", err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("issues = %q, want %q", got, tc.want)
			}
		})
	}

	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/nowhere"},
		{"PUT", "/v1/capabilities"},
		{"GET", "/v2/capabilities"},
	} {
		t.Run("no_operation"+strings.ReplaceAll(tc.path, "/", "_")+"_"+tc.method, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.path, nil)
			issues, err := c.ValidateRequest(ctx, req, nil)
			if !errors.Is(err, ErrNoOperation) || issues != nil {
				t.Errorf("ValidateRequest() = %q, %v; want ErrNoOperation", issues, err)
			}
			if err := c.ValidateResponse(ctx, req, 200, http.Header{}, nil); !errors.Is(err, ErrNoOperation) {
				t.Errorf("ValidateResponse() error = %v, want ErrNoOperation", err)
			}
		})
	}
}

func TestEmailOfLength(t *testing.T) {
	t.Parallel()
	for _, n := range []int{255, 256} {
		e := emailOfLength(n)
		if len(e) != n || validateEmail(e) != nil {
			t.Errorf("emailOfLength(%d) = %q (len %d), valid = %v", n, e, len(e), validateEmail(e) == nil)
		}
	}
}

// BenchmarkValidateRequest measures the cost the server pays per request,
// as the process's CPU time per request (cpu-ns/op) beside wall time, which
// on a shared machine is mostly waiting for a core.
func BenchmarkValidateRequest(b *testing.B) {
	c := contract(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name, path string
		body       map[string]any
	}{
		{"confirm", "/v1/bookings", confirmBody()},
		{"search", "/v1/booking-options", searchBody()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body, _ := json.Marshal(bc.body)
			b.ReportAllocs()
			cpu0 := processCPU(b)
			for b.Loop() {
				req := httptest.NewRequest("POST", bc.path, nil)
				req.Header.Set("Content-Type", "application/json")
				if issues, err := c.ValidateRequest(ctx, req, body); err != nil || issues != nil {
					b.Fatalf("ValidateRequest() = %q, %v", issues, err)
				}
			}
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU returns the CPU time the process has used (user and system).
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestValidateEmailRefusesWhatAnMTAMustNotBeHanded(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"greta.gasfot@example.se", "a@b.co", "åsa@exempel.se", "x+tag@sub.example-site.se", "a@xn--rksmrgs-5wao1o.se"} {
		if err := validateEmail(s); err != nil {
			t.Errorf("validateEmail(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range []string{"eve@[127.0.0.1]", "eve@[IPv6:::1]", "eve@127.0.0.1", "eve@localhost", "eve@example",
		"eve@.example.se", "eve@example.se.", "eve@exa_mple.se", "eve@-example.se", "eve@example-.se", "eve@10.0.0.1",
		"eve@example..se", "Eve <eve@example.se>"} {
		if err := validateEmail(s); err == nil {
			t.Errorf("validateEmail(%q) = nil, want an error", s)
		}
	}
}
