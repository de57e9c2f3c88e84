package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/sqlstore"
)

// moveToTestRealm makes the provider a provider of the test realm, as the
// test supply's are, and moves the supply revision on so search sees it.
func (e *testEnv) moveToTestRealm(t testing.TB, providerID string) {
	t.Helper()
	ctx := context.Background()
	err := e.db.InTx(ctx, func(tx *sqlstore.Tx) error {
		if _, err := tx.Q().ExecContext(ctx, `UPDATE providers SET mode = 'test' WHERE id = $1`, providerID); err != nil {
			return err
		}
		_, err := tx.Q().ExecContext(ctx, `UPDATE supply_revision SET revision = revision + 1 WHERE id = 1`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testPartner creates a test-mode partner with every scope and returns its token.
func (e *testEnv) testPartner(t testing.TB, name string) string {
	t.Helper()
	_, token, err := e.authn.CreatePartnerIn(context.Background(), bokat.ModeTest, name, bokat.AllScopes(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// searchAs searches the faucet job with the token ("" for none) and returns
// the response and its options' providers.
func (e *testEnv) searchAs(t testing.TB, token string) (response, []map[string]any) {
	t.Helper()
	req := request{Method: "POST", Path: "/v1/booking-options", Body: faucetSearch()}
	if token != "" {
		req.Header = bearer(token)
	}
	r := e.do(req)
	if r.Status != 200 {
		t.Fatalf("search: %d %s", r.Status, r.Body)
	}
	var out []map[string]any
	for _, o := range r.JSON["options"].([]any) {
		out = append(out, o.(map[string]any))
	}
	return r, out
}

// invisible reports whether r answers as for an unknown id: 404, or the
// status route's 200 found: false.
func invisible(r response) bool {
	return r.Status == 404 || r.Status == 200 && r.JSON["found"] == false
}

// checkMode fails unless the response carries Bokat-Mode: test exactly when test.
func checkMode(t testing.TB, what string, h http.Header, test bool) {
	t.Helper()
	got := h.Get(ModeHeader)
	if want := map[bool]string{true: "test", false: ""}[test]; got != want {
		t.Errorf("%s: %s = %q, want %q", what, ModeHeader, got, want)
	}
}

// TestTestAndLiveRealmsNeverMeet is the matrix of issue 25: a test
// credential cannot find, book, read, change or be notified about a live
// object, on REST and on /mcp, and a live credential cannot touch a test
// one; test bookings take only test providers' time; every answer to a test
// credential says so in Bokat-Mode.
func TestTestAndLiveRealmsNeverMeet(t *testing.T) {
	t.Parallel()
	forEachWebhookEngine(t, true, func(t *testing.T, e *webhookEnv) {
		e.withDemoSupply()
		live, test := e.token, e.testPartner(t, "integrator")
		if !strings.HasPrefix(test, bokat.PartnerTestTokenPrefix) || strings.HasPrefix(live, bokat.PartnerTestTokenPrefix) {
			t.Fatalf("tokens not told apart at a glance: live %.12s…, test %.12s…", live, test)
		}
		_, before := e.searchAs(t, "")
		testProvider := optionProvider(before[0])
		e.moveToTestRealm(t, testProvider)

		// Search: each realm finds only its own supply.
		r, testOpts := e.searchAs(t, test)
		checkMode(t, "test search", r.Header, true)
		if len(testOpts) == 0 {
			t.Fatal("a test credential found no test option")
		}
		for _, o := range testOpts {
			if optionProvider(o) != testProvider {
				t.Errorf("test search offered the live provider %s", optionProvider(o))
			}
		}
		for _, token := range []string{"", live} {
			r, opts := e.searchAs(t, token)
			checkMode(t, "live search", r.Header, false)
			for _, o := range opts {
				if optionProvider(o) == testProvider {
					t.Errorf("a live search (token %t) offered the test provider", token != "")
				}
			}
		}
		_, liveOpts := e.searchAs(t, live)

		// Confirm: an option of the other realm is unavailable, both ways.
		for _, c := range []struct {
			name  string
			token string
			o     map[string]any
		}{{"test token, live option", test, liveOpts[0]}, {"live token, test option", live, testOpts[0]}} {
			r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(c.o, "cross"), Header: bearer(c.token)})
			if r.Status != 409 || r.JSON["code"] != string(bokat.CodeBookingOptionUnavailable) {
				t.Errorf("%s: %d %s, want 409 booking_option_unavailable", c.name, r.Status, r.Body)
			}
			checkMode(t, c.name, r.Header, c.token == test)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM bookings`); n != 0 {
			t.Fatalf("cross-realm confirmations stored %d bookings", n)
		}

		// One idempotency key in both realms: two bookings, no replay.
		tr := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(testOpts[0], "same-key"), Header: bearer(test)})
		lr := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(liveOpts[0], "same-key"), Header: bearer(live)})
		if tr.Status != 201 || lr.Status != 201 || lr.JSON["idempotent_replay"] != false {
			t.Fatalf("confirm: test %d %s; live %d %s", tr.Status, tr.Body, lr.Status, lr.Body)
		}
		checkMode(t, "test confirm", tr.Header, true)
		checkMode(t, "live confirm", lr.Header, false)
		testBooking := tr.JSON["booking"].(map[string]any)["id"].(string)
		liveBooking := lr.JSON["booking"].(map[string]any)["id"].(string)
		for id, mode := range map[string]string{testBooking: "test", liveBooking: "live"} {
			for _, q := range []string{`SELECT COUNT(*) FROM bookings WHERE id = $1 AND mode = $2`,
				`SELECT COUNT(*) FROM outbox_events WHERE booking_id = $1 AND mode = $2`,
				`SELECT COUNT(*) FROM notification_jobs WHERE booking_id = $1 AND mode = $2`} {
				if n := e.count(t, q, id, mode); n == 0 {
					t.Errorf("%s: no row of booking %s in mode %s", q, id, mode)
				}
			}
		}
		if n := e.count(t, `SELECT COUNT(*) FROM idempotency_keys WHERE idem_key = 'same-key' AND mode = 'test'`); n != 1 {
			t.Errorf("test idempotency records = %d, want 1", n)
		}
		// Reschedule options: each booking's own provider, in its realm.
		for id, token := range map[string]string{testBooking: test, liveBooking: live} {
			r := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/booking-options", Body: rescheduleOptionsBody(),
				Header: bearer(token)})
			checkMode(t, "reschedule options", r.Header, token == test)
			opts, _ := r.JSON["options"].([]any)
			if r.Status != 200 || len(opts) == 0 {
				t.Errorf("reschedule options of the %s booking: %d %s, want its provider's times", map[bool]string{true: "test",
					false: "live"}[token == test], r.Status, r.Body)
			}
			for _, o := range opts {
				if (optionProvider(o.(map[string]any)) == testProvider) != (token == test) {
					t.Errorf("reschedule options crossed realms: %v", optionProvider(o.(map[string]any)))
				}
			}
		}
		if bs, err := e.db.ProviderBookings(context.Background(), testProvider, time.Now().Add(-time.Hour)); err != nil || len(bs) != 0 {
			t.Errorf("the provider's feed and pages see %d test bookings (%v), want none", len(bs), err)
		}

		// Webhook endpoints: each realm registers one.
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
		t.Cleanup(recv.Close)
		eps := map[string]string{}
		for name, token := range map[string]string{"test": test, "live": live} {
			r := e.register(token, recv.URL, "booking.confirmed", "booking.cancelled")
			if r.Status != 201 {
				t.Fatalf("register %s: %d %s", name, r.Status, r.Body)
			}
			checkMode(t, "register "+name, r.Header, name == "test")
			eps[name] = r.JSON["endpoint"].(map[string]any)["id"].(string)
		}
		e.pump()

		// The matrix: every owner-scoped route, each token against the
		// other realm's objects, answers as for an unknown id: 404, or the
		// status route's 200 found: false.
		type foreign struct{ token, booking, endpoint, option string }
		sides := map[string]foreign{
			"test token on live objects": {test, liveBooking, eps["live"], ""},
			"live token on test objects": {live, testBooking, eps["test"], ""},
		}
		for name, f := range sides {
			isTest := f.token == test
			own := testOpts
			if !isTest {
				own = liveOpts
			}
			for _, c := range []request{
				{Method: "GET", Path: "/v1/bookings/" + f.booking},
				{Method: "POST", Path: "/v1/bookings/" + f.booking + "/cancel", Body: cancelBody("m-cancel")},
				{Method: "POST", Path: "/v1/bookings/" + f.booking + "/reschedule", Body: rescheduleBody(own[len(own)-1], "m-move")},
				{Method: "GET", Path: "/api/public/bookings/" + f.booking},
				{Method: "DELETE", Path: "/v1/webhook-endpoints/" + f.endpoint},
				{Method: "POST", Path: "/v1/webhook-endpoints/" + f.endpoint + "/enable"},
				{Method: "POST", Path: "/v1/webhook-endpoints/" + f.endpoint + "/disable"},
				{Method: "POST", Path: "/v1/webhook-endpoints/" + f.endpoint + "/rotate-secret", Body: map[string]any{}},
				{Method: "GET", Path: "/v1/webhook-endpoints/" + f.endpoint + "/deliveries"},
				{Method: "POST", Path: "/v1/webhook-endpoints/" + f.endpoint + "/recover", Body: map[string]any{"since": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}},
			} {
				c.Header = bearer(f.token)
				r := e.do(c)
				if !invisible(r) {
					t.Errorf("%s: %s %s = %d %s, want 404 (or the status route's found: false)", name, c.Method, c.Path, r.Status, r.Body)
				}
				checkMode(t, name+" "+c.Path, r.Header, isTest)
			}
			list := e.do(request{Method: "GET", Path: "/v1/webhook-endpoints", Header: bearer(f.token)})
			for _, ep := range list.JSON["endpoints"].([]any) {
				if ep.(map[string]any)["id"] == f.endpoint {
					t.Errorf("%s: the list shows the other realm's endpoint", name)
				}
			}
		}
		// Replaying the other realm's event is refused like an unknown one.
		var liveEvent, testEvent string
		for id, dst := range map[string]*string{liveBooking: &liveEvent, testBooking: &testEvent} {
			if err := e.db.R().QueryRowContext(context.Background(),
				`SELECT id FROM outbox_events WHERE booking_id = $1`, id).Scan(dst); err != nil {
				t.Fatal(err)
			}
		}
		for token, ev := range map[string]string{test: liveEvent, live: testEvent} {
			if r := e.do(request{Method: "POST", Path: "/v1/webhook-events/" + ev + "/replay", Header: bearer(token)}); r.Status != 404 {
				t.Errorf("replay of the other realm's event: %d %s, want 404", r.Status, r.Body)
			}
		}
		// Deliveries: each endpoint got only its own realm's events.
		if n := e.count(t, `SELECT COUNT(*) FROM webhook_deliveries d JOIN outbox_events o ON o.id = d.outbox_id
			WHERE d.mode <> o.mode OR d.endpoint_id = $1 AND o.mode <> 'test' OR d.endpoint_id = $2 AND o.mode <> 'live'`,
			eps["test"], eps["live"]); n != 0 {
			t.Errorf("%d deliveries crossed realms", n)
		}

		// The same over /mcp, at every protocol version.
		for _, version := range mcpEras {
			t.Run(version, func(t *testing.T) {
				for name, f := range sides {
					s := e.mcpConnect(t, version, f.token)
					if st := s.call("get_booking_status", map[string]any{"booking_id": f.booking}).success(t, name+" status"); st["found"] != false {
						t.Errorf("%s: /mcp status sees the other realm's booking: %v", name, st)
					}
					checkMode(t, name+" /mcp", s.transport.lastResponse().Header, f.token == test)
					s.call("cancel_booking", map[string]any{"booking_id": f.booking, "user_confirmation_confirmed": true,
						"reason": "timing_no_longer_works", "idempotency_key": "mcp-cancel"}).
						problem(t, name+" cancel", bokat.CodeBookingNotFound, 404)
					opt := liveOpts[len(liveOpts)-1]
					if f.token == live {
						opt = testOpts[len(testOpts)-1]
					}
					s.call("confirm_booking", confirmBody(opt, "mcp-cross")).
						problem(t, name+" confirm", bokat.CodeBookingOptionUnavailable, 409)
					found := s.call("search_booking_options", faucetSearch()).success(t, name+" search")
					for _, o := range found["options"].([]any) {
						if (optionProvider(o.(map[string]any)) == testProvider) != (f.token == test) {
							t.Errorf("%s: /mcp search crossed realms: %v", name, optionProvider(o.(map[string]any)))
						}
					}
				}
			})
		}
		if n := e.count(t, `SELECT COUNT(*) FROM bookings WHERE status = 'confirmed'`); n != 2 {
			t.Errorf("confirmed bookings = %d, want the 2 of each realm's own", n)
		}
	})
}

// TestTestFollowUpRequestsReachOnlyTestProviders: a test request's
// candidates are test providers, and a live one's never are.
func TestTestFollowUpRequestsReachOnlyTestProviders(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		_, opts := e.searchAs(t, "")
		testProvider := optionProvider(opts[0])
		e.moveToTestRealm(t, testProvider)
		test := e.testPartner(t, "integrator")
		body := set(validRequestBody(), "job_type_id", "install_faucet")
		for _, c := range []struct {
			token string
			test  bool
		}{{test, true}, {e.token, false}} {
			r := e.do(request{Method: "POST", Path: "/v1/requests", Body: body, Header: bearer(c.token)})
			if r.Status != 201 {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			checkMode(t, "create request", r.Header, c.test)
			req := r.JSON["request"].(map[string]any)
			cands := req["provider_candidates"].([]any)
			if c.test && len(cands) != 1 {
				t.Errorf("test request candidates = %v, want the one test provider", cands)
			}
			for _, cand := range cands {
				if id := cand.(map[string]any)["id"]; (id == testProvider) != c.test {
					t.Errorf("request (test %v) went to provider %v", c.test, id)
				}
			}
			mode := map[bool]string{true: "test", false: "live"}[c.test]
			if n := e.count(t, `SELECT COUNT(*) FROM follow_up_requests WHERE id = $1 AND mode = $2`, req["id"], mode); n != 1 {
				t.Errorf("request %v not stored in mode %s", req["id"], mode)
			}
			if n := e.count(t, `SELECT COUNT(*) FROM notification_jobs WHERE request_id = $1 AND mode <> $2`, req["id"], mode); n != 0 {
				t.Errorf("request %v queued %d jobs of the other mode", req["id"], n)
			}
		}
	})
}
