package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func withMeta(m map[string]any, contractVersion string) map[string]any {
	m["api_request_id"] = "0b6c0f8e-8d53-4c52-a5f0-7c6b1e0f2a11"
	m["trace_id"] = "4bf92f3577b34da6a3ce929d0e0e4736"
	m["contract_version"] = contractVersion
	m["server_time"] = "2026-03-02T08:15:00Z"
	return m
}

func confirmedBooking() map[string]any {
	return map[string]any{
		"id": "bk_123", "status": "confirmed", "provider_id": "prv_1", "provider_name": "Rörfixarna AB",
		"service_id": "vvs_install_faucet_standard", "slot_start_at": "2026-03-04T08:00:00+01:00",
		"slot_end_at": "2026-03-04T10:00:00+01:00", "slot_label": "ons 4 mars 08–10", "price_sek": 1890,
		"currency": "SEK", "confirmed_at": "2026-03-02T08:15:00Z",
		"terms_version":                "fixed_price_terms_v1:vvs_install_faucet_standard",
		"customer_confirmation_status": "sent", "provider_confirmation_status": "sent",
	}
}

func confirmResponse(replay bool) map[string]any {
	return withMeta(map[string]any{
		"ok": true, "spec_version": "public_bookings_api_v1", "request_id": "req_9", "booking": confirmedBooking(),
		"provider_selected": true, "availability_checked": true, "booking_created": true,
		"confirmation_delivery": map[string]any{
			"customer": map[string]any{"status": "queued"}, "provider": map[string]any{"status": "queued"},
			"webhook": map[string]any{"status": "queued"},
		},
		"idempotent_replay": replay, "safe_next_step": "Tell the user the booking is confirmed.",
	}, "public_bookings_api_v1")
}

func problem(status int, code string) map[string]any {
	return withMeta(map[string]any{
		"type": "https://bokat.example/problems/" + code, "title": "Problem", "status": status,
		"detail": "Something is wrong.", "instance": "/v1/bookings", "code": code, "ok": false,
	}, "public_bookings_api_v1")
}

func bookingOption() map[string]any {
	return map[string]any{
		"booking_option_id": "bo1.eyJleGFtcGxlIjp0cnVlfQ.c2lnbmF0dXJl",
		"expires_at":        "2026-03-02T08:30:00Z",
		"provider":          map[string]any{"id": "prv_1", "name": "Rörfixarna AB", "city": "Stockholm"},
		"service": map[string]any{"service_id": "vvs_install_faucet_standard", "vertical_id": "vvs",
			"job_type_id": "install_faucet", "label_sv": "Byte av blandare"},
		"slot":  map[string]any{"start_at": "2026-03-04T08:00:00+01:00", "end_at": "2026-03-04T10:00:00+01:00", "label": "ons 4 mars 08–10"},
		"price": map[string]any{"amount_sek": 1890, "currency": "SEK", "pricing_model": "flat", "price_type": "avg_fixed"},
		"scope": map[string]any{"included_sv": []any{"Montering"}},
		"terms": map[string]any{"version": "fixed_price_terms_v1:vvs_install_faucet_standard",
			"url": "https://bokat.example/terms/vvs_install_faucet_standard", "sections": []any{map[string]any{"title": "Pris"}}},
	}
}

func searchResponse(options ...map[string]any) map[string]any {
	opts := make([]any, len(options))
	for i, o := range options {
		opts[i] = o
	}
	m := withMeta(map[string]any{
		"ok": true, "spec_version": "public_bookings_api_v1", "availability_checked": true,
		"provider_selected": false, "booking_created": false, "direct_booking_available": len(options) > 0,
		"option_count": len(options), "options": opts, "safe_next_step": "Let the user choose one option.",
	}, "public_bookings_api_v1")
	if len(options) == 0 {
		m["fallback"] = map[string]any{"type": "provider_follow_up_request", "endpoint": "https://bokat.example/v1/requests", "reason": "no_direct_option"}
	}
	return m
}

func capabilities() map[string]any {
	return withMeta(map[string]any{
		"ok": true, "spec_version": "public_requests_api_v1",
		"endpoints": map[string]any{
			"search_booking_options": "POST /v1/booking-options", "confirm_booking": "POST /v1/bookings",
			"booking_status": "GET /v1/bookings/{booking_id}", "create_request": "POST /v1/requests",
			"capabilities": "GET /v1/capabilities",
		},
		"lifecycle": map[string]any{"creates": "network_visit_request", "request_status": "ready_to_send",
			"booking_created": false, "availability_checked": false, "provider_selected": false, "note": "Never a booking."},
		"booking_lifecycle": map[string]any{"search": "s", "confirm": "c", "fallback": "f", "availability_truth": "a",
			"confirmed_contract": map[string]any{"booking_created": true, "availability_checked": true,
				"provider_selected": true, "booking_status": "confirmed"}},
		"supported_verticals": []any{map[string]any{
			"vertical_id": "vvs", "label_sv": "VVS", "label_en": "Plumbing", "agent_status": "booking_and_request_supported",
			"provider_supply": "indexed", "direct_booking_supply": "search_required", "fixed_price_service_count": 9,
			"job_types": []any{map[string]any{
				"job_type_id": "install_faucet", "label_sv": "Byte av blandare", "label_en": "Install faucet",
				"routing_mode": "standardized", "fixed_price_fit": "high",
				"required_signals": []any{"install_target_known"},
				"fixed_price_seed": map[string]any{"service_id": "vvs_install_faucet_standard", "pricing_model": "flat",
					"price_type": "avg_fixed", "currency": "SEK", "booking_mode_when_qualified": "direct_job_candidate",
					"direct_booking_fit": "high", "provider_confirmation_required": true},
			}},
		}},
		"unavailable_verticals": []any{map[string]any{"vertical_id": "painting", "label_sv": "Måleri", "label_en": "Painting",
			"agent_status": "not_bookable_yet", "reason": "not_bookable_yet", "safe_next_step": "Say it is not bookable yet."}},
		"geographic_scope": map[string]any{"country_code": "SE", "country_name": "Sverige", "bookable_only_in_country": true},
	}, "public_requests_api_v1")
}

func webhookEndpoint() map[string]any {
	return map[string]any{
		"id": "0b6c0f8e-8d53-4c52-a5f0-7c6b1e0f2a11", "url": "https://hooks.example.se/bokat",
		"event_types": []any{"booking.confirmed"}, "signing_key_id": "key_1", "enabled": true,
		"created_at": "2026-03-02T08:15:00Z", "updated_at": "2026-03-02T08:15:00Z",
	}
}

type responseCase struct {
	name        string
	method      string
	path        string
	status      int
	contentType string
	header      map[string]string
	body        map[string]any
	mutate      func(map[string]any)
	// want is "" for a valid response, else a text the error must contain.
	want string
}

var legacyHeaders = map[string]string{"Deprecation": "@1767225600", "Link": `</v1/bookings>; rel="successor-version"`}

func TestValidateResponse(t *testing.T) {
	t.Parallel()
	const jsonCT, problemCT = "application/json", "application/problem+json"
	found := withMeta(map[string]any{"ok": true, "found": true, "request_id": "req_9", "booking": confirmedBooking(),
		"provider_selected": true, "availability_checked": true, "booking_created": true,
		"current_confirmation_active": true, "safe_next_step": "s"}, "public_bookings_api_v1")
	notFound := withMeta(map[string]any{"ok": true, "found": false, "booking_id": "bk_404", "safe_next_step": "Check the id."}, "public_bookings_api_v1")
	created := withMeta(map[string]any{"ok": true, "spec_version": "public_requests_api_v1",
		"request": map[string]any{"id": "req_1", "session_id": "ses_1", "status": "ready_to_send", "vertical_id": "vvs",
			"job_type_id": "leak_hidden", "taxonomy_confidence": "high", "customer_next_step": "home_visit",
			"candidate_provider_count": 2, "provider_candidates": []any{map[string]any{"id": "prv_1", "can_receive_request": true}}},
		"booking_created": false, "availability_checked": false, "provider_selected": false, "safe_next_step": "s"},
		"public_requests_api_v1")
	cancelled := withMeta(map[string]any{"ok": true, "booking_id": "bk_123", "status": "cancelled",
		"cancelled_at": "2026-03-02T09:00:00Z", "booking_created": true, "current_confirmation_active": false,
		"idempotent_replay": false, "notification_delivery": map[string]any{"customer": map[string]any{"status": "queued"}}},
		"public_bookings_api_v1")
	rescheduled := withMeta(map[string]any{"ok": true, "booking": confirmedBooking(), "booking_created": true,
		"current_confirmation_active": true, "provider_selected": true, "availability_checked": true,
		"rescheduled_at": "2026-03-02T09:00:00Z", "idempotent_replay": false}, "public_bookings_api_v1")
	endpointCreated := withMeta(map[string]any{"ok": true, "endpoint": webhookEndpoint(),
		"signing_secret": "whsec_" + strings.Repeat("A", 43) + "=", "signing_secret_shown_once": true}, "public_bookings_api_v1")
	replay := withMeta(map[string]any{"ok": true, "replay": map[string]any{"id": "5f0c8f4e-5b1a-4c1e-9f55-2f1d3c4b5a69",
		"booking_id": "bk_123", "event_type": "booking.confirmed", "status": "pending", "created_at": "2026-03-02T09:00:00Z"}},
		"public_bookings_api_v1")
	legacyError := map[string]any{"ok": false, "error": "invalid_request", "status": 400, "issues": []any{"description: too short"}}
	retry := map[string]string{"Retry-After": "30"}

	cases := []responseCase{
		// Valid responses of every operation.
		{name: "capabilities", method: "GET", path: "/v1/capabilities", status: 200, body: capabilities()},
		{name: "search/options", method: "POST", path: "/v1/booking-options", status: 200, body: searchResponse(bookingOption())},
		{name: "search/fallback", method: "POST", path: "/v1/booking-options", status: 200, body: searchResponse()},
		{name: "confirm/created", method: "POST", path: "/v1/bookings", status: 201, body: confirmResponse(false)},
		{name: "confirm/replay", method: "POST", path: "/v1/bookings", status: 200, body: confirmResponse(true)},
		{name: "status/found", method: "GET", path: "/v1/bookings/bk_123", status: 200, body: found},
		{name: "status/not_found", method: "GET", path: "/v1/bookings/bk_404", status: 200, body: notFound},
		{name: "request/created", method: "POST", path: "/v1/requests", status: 201, body: created},
		{name: "cancel", method: "POST", path: "/v1/bookings/bk_123/cancel", status: 200, body: cancelled},
		{name: "reschedule", method: "POST", path: "/v1/bookings/bk_123/reschedule", status: 200, body: rescheduled},
		{name: "webhook/list", method: "GET", path: "/v1/webhook-endpoints", status: 200,
			body: withMeta(map[string]any{"ok": true, "endpoints": []any{webhookEndpoint()}}, "public_bookings_api_v1")},
		{name: "webhook/created", method: "POST", path: "/v1/webhook-endpoints", status: 201, body: endpointCreated},
		{name: "webhook/deleted", method: "DELETE", path: "/v1/webhook-endpoints/0b6c0f8e-8d53-4c52-a5f0-7c6b1e0f2a11", status: 200,
			body: withMeta(map[string]any{"ok": true}, "public_bookings_api_v1")},
		{name: "webhook/replay", method: "POST", path: "/v1/webhook-events/0b6c0f8e-8d53-4c52-a5f0-7c6b1e0f2a11/replay", status: 202, body: replay},
		{name: "problem/expired", method: "POST", path: "/v1/bookings", status: 409, contentType: problemCT,
			body: problem(409, "booking_option_expired"), mutate: func(m map[string]any) { m["option_refresh_required"] = true }},
		{name: "problem/rate_limited", method: "POST", path: "/v1/booking-options", status: 429, contentType: problemCT,
			header: retry, body: problem(429, "rate_limited")},
		{name: "problem/internal_error", method: "GET", path: "/v1/capabilities", status: 500, contentType: problemCT,
			body: problem(500, "internal_error")},
		{name: "legacy/status", method: "GET", path: "/api/public/bookings/bk_123", status: 200, header: legacyHeaders, body: found},
		{name: "legacy/error", method: "POST", path: "/api/public/requests", status: 400, header: legacyHeaders, body: legacyError},
		{name: "legacy/unavailable", method: "POST", path: "/api/public/requests", status: 503,
			header: map[string]string{"Deprecation": "@1767225600", "Link": `</v1/requests>; rel="successor-version"`, "Retry-After": "60"},
			body:   map[string]any{"ok": false, "error": "production_token_not_configured"}},

		// Drift the document must catch.
		{name: "drift/trace_id_upper_case", method: "POST", path: "/v1/bookings", status: 400, contentType: problemCT,
			body: problem(400, "validation_failed"), mutate: func(m map[string]any) { m["trace_id"] = "4BF92F3577B34DA6A3CE929D0E0E4736" },
			want: `trace_id: must match the pattern "^[0-9a-f]{32}$"`},
		{name: "drift/problem_without_detail", method: "POST", path: "/v1/bookings", status: 400, contentType: problemCT,
			body: problem(400, "validation_failed"), mutate: func(m map[string]any) { delete(m, "detail") }, want: "detail: is required"},
		{name: "drift/problem_code_case", method: "POST", path: "/v1/bookings", status: 400, contentType: problemCT,
			body: problem(400, "Validation-Failed"), want: `code: must match the pattern "^[a-z0-9_]+$"`},
		{name: "drift/problem_api_request_id", method: "POST", path: "/v1/bookings", status: 400, contentType: problemCT,
			body: problem(400, "validation_failed"), mutate: func(m map[string]any) { m["api_request_id"] = "req-1" },
			want: "api_request_id: must be a UUID"},
		{name: "drift/problem_server_time", method: "POST", path: "/v1/bookings", status: 400, contentType: problemCT,
			body: problem(400, "validation_failed"), mutate: func(m map[string]any) { m["server_time"] = "02/03/2026" },
			want: "server_time: must be an RFC 3339 date-time"},
		{name: "drift/problem_as_json", method: "POST", path: "/v1/bookings", status: 400, body: problem(400, "validation_failed"),
			want: "Content-Type (header): must be application/problem+json"},
		{name: "drift/expired_without_refresh", method: "POST", path: "/v1/bookings", status: 409, contentType: problemCT,
			body: problem(409, "booking_option_expired"), want: `option_refresh_required: is required when code is "booking_option_expired"`},
		{name: "drift/429_without_retry_after", method: "POST", path: "/v1/bookings", status: 429, contentType: problemCT,
			body: problem(429, "rate_limited"), want: "Retry-After (header): is required"},
		{name: "drift/retry_after_not_seconds", method: "POST", path: "/v1/bookings", status: 429, contentType: problemCT,
			body: problem(429, "rate_limited"), header: map[string]string{"Retry-After": "soon"}, want: "Retry-After (header): must be an integer"},
		{name: "drift/503_without_retry_after", method: "POST", path: "/v1/requests", status: 503, contentType: problemCT,
			body: problem(503, "persistence_unavailable"), want: "Retry-After (header): is required"},
		{name: "drift/capabilities_without_metadata", method: "GET", path: "/v1/capabilities", status: 200, body: capabilities(),
			mutate: func(m map[string]any) { delete(m, "trace_id") }, want: "trace_id: is required"},
		{name: "drift/created_as_replay", method: "POST", path: "/v1/bookings", status: 201, body: confirmResponse(true),
			want: "idempotent_replay: must be false"},
		{name: "drift/confirm_without_flag", method: "POST", path: "/v1/bookings", status: 201, body: confirmResponse(false),
			mutate: func(m map[string]any) { delete(m, "availability_checked") }, want: "availability_checked: is required"},
		{name: "drift/confirm_price_text", method: "POST", path: "/v1/bookings", status: 201, body: confirmResponse(false),
			mutate: func(m map[string]any) { set(m, "booking.price_sek", "1890") }, want: "booking.price_sek: must be an integer"},
		{name: "drift/search_claims_booking", method: "POST", path: "/v1/booking-options", status: 200,
			body: searchResponse(bookingOption()), mutate: func(m map[string]any) { m["booking_created"] = true },
			want: "booking_created: must be false"},
		{name: "drift/search_empty_without_fallback", method: "POST", path: "/v1/booking-options", status: 200,
			body: searchResponse(), mutate: func(m map[string]any) { delete(m, "fallback") },
			want: "fallback: is required when direct_booking_available is false"},
		{name: "drift/search_count_mismatch", method: "POST", path: "/v1/booking-options", status: 200,
			body: searchResponse(), mutate: func(m map[string]any) { m["option_count"] = 2 }, want: "option_count: must be 0"},
		{name: "drift/status_with_neither_shape", method: "GET", path: "/v1/bookings/bk_123", status: 200,
			body: map[string]any{"ok": true, "found": true}, want: "(root): must match one of the allowed forms"},
		{name: "drift/search_without_metadata", method: "POST", path: "/v1/booking-options", status: 200,
			body: searchResponse(), mutate: func(m map[string]any) { delete(m, "server_time") }, want: "server_time: is required"},
		{name: "drift/cancel_without_metadata", method: "POST", path: "/v1/bookings/bk_123/cancel", status: 200,
			body: cancelled, mutate: func(m map[string]any) { delete(m, "api_request_id"); delete(m, "trace_id") }, want: "api_request_id: is required"},
		{name: "drift/webhook_secret_shape", method: "POST", path: "/v1/webhook-endpoints", status: 201, body: endpointCreated,
			mutate: func(m map[string]any) { m["signing_secret"] = "secret" }, want: "signing_secret: must match the pattern"},
		{name: "drift/replay_success_as_200", method: "POST", path: "/v1/webhook-events/0b6c0f8e-8d53-4c52-a5f0-7c6b1e0f2a11/replay",
			status: 200, body: replay, want: "Content-Type (header): must be application/problem+json"},
		{name: "drift/legacy_without_deprecation", method: "GET", path: "/api/public/bookings/bk_123", status: 200, body: found,
			header: map[string]string{"Link": `</v1/bookings/bk_123>; rel="successor-version"`}, want: "Deprecation (header): is required"},
		{name: "drift/legacy_without_link", method: "POST", path: "/api/public/requests", status: 400, body: legacyError,
			header: map[string]string{"Deprecation": "@1767225600"}, want: "Link (header): is required"},
		{name: "drift/legacy_error_shape", method: "POST", path: "/api/public/requests", status: 400, header: legacyHeaders,
			body: map[string]any{"ok": false}, want: "error: is required"},
	}
	ctx := context.Background()
	c := contract(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := deepCopy(t, tc.body) // cases share their base bodies
			if tc.mutate != nil {
				tc.mutate(body)
			}
			raw, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			ct := tc.contentType
			if ct == "" {
				ct = jsonCT
			}
			h.Set("Content-Type", ct)
			for k, v := range tc.header {
				h.Set(k, v)
			}
			req := httptest.NewRequest(tc.method, tc.path, nil)
			err = c.ValidateResponse(ctx, req, tc.status, h, raw)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("ValidateResponse() error = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("ValidateResponse() error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestValidateWebhookEvent(t *testing.T) {
	t.Parallel()
	c := contract(t)
	booking := confirmedBooking()
	booking["status"] = "cancelled"
	event := map[string]any{
		"id": "msg_2c1b", "outbox_id": "0b6c0f8e-8d53-4c52-a5f0-7c6b1e0f2a11", "type": "booking.cancelled",
		"occurred_at": "2026-03-02T09:00:00Z", "created_at": "2026-03-02T09:00:01Z",
		"spec_version": "public_bookings_api_v1", "data": map[string]any{"booking": booking, "request_id": "req_9"},
	}
	raw, _ := json.Marshal(event)
	if err := c.ValidateWebhookEvent(raw); err != nil {
		t.Fatalf("ValidateWebhookEvent(valid) error = %v", err)
	}
	event["outbox_id"] = "42"
	event["type"] = "booking.created"
	delete(event["data"].(map[string]any), "booking")
	raw, _ = json.Marshal(event)
	err := c.ValidateWebhookEvent(raw)
	for _, want := range []string{"outbox_id: must be a UUID", `type: must be one of "booking.confirmed"`, "data.booking: is required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateWebhookEvent(invalid) error = %v, want one containing %q", err, want)
		}
	}
}

func deepCopy(tb testing.TB, m map[string]any) map[string]any {
	tb.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		tb.Fatal(err)
	}
	return out
}
