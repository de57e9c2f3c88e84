package httpapi

import (
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
)

// rescheduleOptionsBody asks for the times of the next two weeks.
func rescheduleOptionsBody() map[string]any {
	return map[string]any{"timing": map[string]any{"preferred_time_text": "inom två veckor"}}
}

// TestRescheduleOptionsOverHTTP: a booking's own provider's options, more
// than a search gives one provider, none overlapping the booked time; one
// of them moves the booking in one call. Only the owner may ask.
func TestRescheduleOptionsOverHTTP(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		opts := e.options(t, faucetSearch())
		b := e.confirm(t, opts[0], "k-book")
		id, provider := b["id"].(string), optionProvider(opts[0])
		path := "/v1/bookings/" + id + "/booking-options"

		r := e.do(request{Method: "POST", Path: path, Body: rescheduleOptionsBody(), Header: bearer(e.token)})
		if r.Status != 200 || r.JSON["direct_booking_available"] != true {
			t.Fatalf("options: %d %s", r.Status, r.Body)
		}
		got := r.JSON["options"].([]any)
		if len(got) <= booking.DefaultMaxPerProvider {
			t.Errorf("%d options, want more than a search's %d per provider", len(got), booking.DefaultMaxPerProvider)
		}
		bookedStart, _ := time.Parse(time.RFC3339, b["slot_start_at"].(string))
		bookedEnd, _ := time.Parse(time.RFC3339, b["slot_end_at"].(string))
		for _, raw := range got {
			o := raw.(map[string]any)
			start, _ := time.Parse(time.RFC3339, optionStart(o))
			end, _ := time.Parse(time.RFC3339, o["slot"].(map[string]any)["end_at"].(string))
			if optionProvider(o) != provider || o["service"].(map[string]any)["service_id"] != b["service_id"] {
				t.Errorf("option of %v / %v, want %s / %s", o["provider"], o["service"], provider, b["service_id"])
			}
			if start.Before(bookedEnd) && bookedStart.Before(end) {
				t.Errorf("option %s overlaps the booked time", optionStart(o))
			}
		}
		target := got[len(got)-1].(map[string]any)
		moved := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/reschedule", Body: rescheduleBody(target, "k-move"), Header: bearer(e.token)})
		if moved.Status != 200 || moved.JSON["booking"].(map[string]any)["slot_start_at"] != optionStart(target) {
			t.Fatalf("reschedule to a listed option: %d %s", moved.Status, moved.Body)
		}

		// Past the horizon: the reason, as search answers it.
		far := e.do(request{Method: "POST", Path: path, Header: bearer(e.token),
			Body: map[string]any{"timing": map[string]any{"preferred_time_text": "om tre veckor"}}})
		if fb, _ := far.JSON["fallback"].(map[string]any); far.Status != 200 || fb["reason"] != booking.ReasonBeyondHorizon {
			t.Errorf("in three weeks: %d %s", far.Status, far.Body)
		}

		// Owner only, scope, credential, body, state.
		other := e.partner("other", bokat.AllScopes()...)
		readOnly := e.partner("read-only", bokat.ScopeBookingsRead)
		for _, tc := range []struct {
			name   string
			path   string
			token  string
			body   any
			status int
			code   bokat.Code
		}{
			{"another client's booking", path, other, rescheduleOptionsBody(), 404, bokat.CodeBookingNotFound},
			{"unknown booking", "/v1/bookings/bk_unknown/booking-options", e.token, rescheduleOptionsBody(), 404, bokat.CodeBookingNotFound},
			{"no credential", path, "", rescheduleOptionsBody(), 401, ""},
			{"without the reschedule scope", path, readOnly, rescheduleOptionsBody(), 403, ""},
			{"no timing", path, e.token, map[string]any{}, 400, bokat.CodeValidationFailed},
			{"a search body", path, e.token, faucetSearch(), 400, bokat.CodeValidationFailed},
		} {
			req := request{Method: "POST", Path: tc.path, Body: tc.body}
			if tc.token != "" {
				req.Header = bearer(tc.token)
			}
			r := e.do(req)
			if r.Status != tc.status || (tc.code != "" && r.JSON["code"] != string(tc.code)) {
				t.Errorf("%s: %d %v, want %d %s", tc.name, r.Status, r.JSON["code"], tc.status, tc.code)
			}
		}

		cancelled := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/cancel", Body: cancelBody("k-cancel"), Header: bearer(e.token)})
		if cancelled.Status != 200 {
			t.Fatalf("cancel: %d %s", cancelled.Status, cancelled.Body)
		}
		if r := e.do(request{Method: "POST", Path: path, Body: rescheduleOptionsBody(), Header: bearer(e.token)}); r.Status != 409 ||
			r.JSON["code"] != string(bokat.CodeBookingNotActive) {
			t.Errorf("a cancelled booking: %d %s", r.Status, r.Body)
		}
	})
}

// TestRescheduleOptionsOverMCP: the tool runs the same operation, for the
// owner only, and its result validates against its outputSchema.
func TestRescheduleOptionsOverMCP(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		opts := e.options(t, faucetSearch())
		b := e.confirm(t, opts[0], "k-book")
		args := with(rescheduleOptionsBody(), func(m map[string]any) { m["booking_id"] = b["id"] })
		for _, version := range mcpEras {
			s := e.mcpConnect(t, version, e.token)
			got := s.call("search_reschedule_options", args).success(t, version+" owner")
			for _, raw := range got["options"].([]any) {
				if p := optionProvider(raw.(map[string]any)); p != optionProvider(opts[0]) {
					t.Errorf("%s: an option of %s", version, p)
				}
			}
			if len(got["options"].([]any)) == 0 {
				t.Errorf("%s: no options", version)
			}
			o := e.mcpConnect(t, version, e.partner("other-"+version, bokat.AllScopes()...))
			o.call("search_reschedule_options", args).problem(t, version+" another client", bokat.CodeBookingNotFound, 404)
		}
	})
}
