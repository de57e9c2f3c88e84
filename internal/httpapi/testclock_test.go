package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/clocktest"
	"bokat/internal/notify"
	"bokat/internal/outbox"
	"bokat/internal/privacy"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
	"bokat/internal/testrealm"
)

// clockEnv is a webhook server on an injected clock, with the test realm's
// supply and the test_cancels worker.
type clockEnv struct {
	*webhookEnv
	clk       *clocktest.Clock
	canceller *testrealm.Canceller
}

func newClockEnv(t *testing.T, db *sqlstore.DB) *clockEnv {
	t.Helper()
	clk := clocktest.New(time.Date(2026, 3, 2, 7, 0, 0, 0, time.UTC)) // a Monday, 08:00 in Stockholm
	e := newWebhookEnv(t, db, true, func(c *envConfig) { c.Now = clk.Now })
	cat, err := loadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testrealm.Seed(context.Background(), sqlstore.Bind[supply.Tx](db), cat, clk.Now()); err != nil {
		t.Fatal(err)
	}
	e.withDemoSupply()
	return &clockEnv{webhookEnv: e, clk: clk,
		canceller: testrealm.NewCanceller(sqlstore.Bind[booking.Tx](db), db, clk.Now, slog.New(slog.DiscardHandler))}
}

// optionOf searches as token and returns an option of the provider ("" for
// any), failing when there is none.
func (e *clockEnv) optionOf(t *testing.T, token, providerID string) map[string]any {
	t.Helper()
	_, opts := e.searchAs(t, token)
	for _, o := range opts {
		if providerID == "" || optionProvider(o) == providerID {
			return o
		}
	}
	t.Fatalf("no option of %q in the search of %.12s…", providerID, token)
	return nil
}

// book confirms an option of the provider as token and returns the booking.
func (e *clockEnv) book(t *testing.T, token, providerID, key string) map[string]any {
	t.Helper()
	r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(e.optionOf(t, token, providerID), key), Header: bearer(token)})
	if r.Status != 201 {
		t.Fatalf("confirm %s: %d %s", key, r.Status, r.Body)
	}
	return r.JSON["booking"].(map[string]any)
}

// advance moves token's test clock with body and returns the answer.
func (e *clockEnv) advance(t *testing.T, token string, body map[string]any) response {
	t.Helper()
	return e.do(request{Method: "POST", Path: "/v1/test/clock/advance", Body: body, Header: bearer(token)})
}

// advanceBy moves token's test clock forward by d, failing unless it moved.
func (e *clockEnv) advanceBy(t *testing.T, token string, d time.Duration) {
	t.Helper()
	if r := e.advance(t, token, map[string]any{"seconds": int64(d / time.Second)}); r.Status != 200 {
		t.Fatalf("advance %s: %d %s", d, r.Status, r.Body)
	}
}

// serverTime reads the server_time of an answer.
func serverTime(t *testing.T, r response) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, r.JSON["server_time"].(string))
	if err != nil {
		t.Fatalf("server_time: %v", err)
	}
	return at
}

// attempts returns the attempts and status of the one delivery to the endpoint.
func (e *clockEnv) attempts(t *testing.T, endpointID string) (int, string) {
	t.Helper()
	var n int
	var status string
	if err := e.db.R().QueryRowContext(context.Background(),
		`SELECT attempts, status FROM webhook_deliveries WHERE endpoint_id = $1`, endpointID).Scan(&n, &status); err != nil {
		t.Fatalf("the delivery to %s: %v", endpointID, err)
	}
	return n, status
}

// TestTheTestClockMovesOnlyItsOwnersTime is the proof of the test clock
// (issue 25 item 3), on both engines with an injected server clock that
// stands still: a test partner advancing its clock sees its options
// expire, its slot pass, test_cancels cancel an hour later with the webhook
// arriving, and a failing endpoint's retry ladder run through; another test
// partner and a live one see no change.
func TestTheTestClockMovesOnlyItsOwnersTime(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newClockEnv(t, db)
		s := &clockScenario{clockEnv: e, start: e.clk.Now(), a: e.testPartner(t, "partner a"), b: e.testPartner(t, "partner b"), live: e.token}
		s.clockStartsAtTheServers(t)
		s.optionsExpire(t)
		s.slotPasses(t)
		s.providerCancels(t)
		s.retryLadderRuns(t)
		s.livePastBookingAnswersAlike(t)
	})
}

// clockScenario is the state TestTheTestClockMovesOnlyItsOwnersTime carries
// from step to step: test partners a and b, the live partner, and what the
// last step compares with.
type clockScenario struct {
	*clockEnv
	start       time.Time
	a, b, live  string
	liveBooking map[string]any
	pastCancel  response
}

// clockStartsAtTheServers: the clock starts at the server's; live credentials
// have none.
func (s *clockScenario) clockStartsAtTheServers(t *testing.T) {
	t.Helper()
	r := s.do(request{Method: "GET", Path: "/v1/test/clock", Header: bearer(s.a)})
	if r.Status != 200 || r.JSON["offset_seconds"] != 0.0 || r.JSON["now"] != s.start.Format(time.RFC3339Nano) {
		t.Fatalf("a new clock: %d %s", r.Status, r.Body)
	}
	checkMode(t, "GET /v1/test/clock", r.Header, true)
	for _, c := range []request{{Method: "GET", Path: "/v1/test/clock"},
		{Method: "POST", Path: "/v1/test/clock/advance", Body: map[string]any{"seconds": 60}}} {
		c.Header = bearer(s.live)
		if r := s.do(c); r.Status != 403 || r.JSON["code"] != string(bokat.CodeForbidden) {
			t.Errorf("live %s %s: %d %s, want 403 forbidden", c.Method, c.Path, r.Status, r.Body)
		}
	}
}

// optionsExpire: options issued before an advance past their lifetime expire
// for their owner only.
func (s *clockScenario) optionsExpire(t *testing.T) {
	t.Helper()
	optA, optB, optLive := s.optionOf(t, s.a, bokat.TestProviderFree), s.optionOf(t, s.b, bokat.TestProviderFree), s.optionOf(t, s.live, "")
	r := s.advance(t, s.a, map[string]any{"seconds": 16 * 60})
	if r.Status != 200 || r.JSON["offset_seconds"] != 960.0 || !serverTime(t, r).Equal(s.start.Add(16*time.Minute)) {
		t.Fatalf("advance 16 min: %d %s", r.Status, r.Body)
	}
	r = s.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(optA, "a-expired"), Header: bearer(s.a)})
	if r.Status != 409 || r.JSON["code"] != string(bokat.CodeBookingOptionExpired) {
		t.Errorf("confirm after the advance: %d %s, want 409 booking_option_expired", r.Status, r.Body)
	}
	if !serverTime(t, r).Equal(s.start.Add(16 * time.Minute)) {
		t.Errorf("a's server_time = %v, want its clock's", serverTime(t, r))
	}
	rb := s.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(optB, "b-1"), Header: bearer(s.b)})
	rl := s.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(optLive, "live-1"), Header: bearer(s.live)})
	if rb.Status != 201 || rl.Status != 201 {
		t.Fatalf("another test partner's or a live confirm after a's advance: %d %s; %d %s", rb.Status, rb.Body, rl.Status, rl.Body)
	}
	if !serverTime(t, rb).Equal(s.start) || !serverTime(t, rl).Equal(s.start) {
		t.Errorf("server_time of b %v and live %v moved, want %v", serverTime(t, rb), serverTime(t, rl), s.start)
	}
	s.liveBooking = rl.JSON["booking"].(map[string]any)
}

// slotPasses: a booking's slot passes on a's clock.
func (s *clockScenario) slotPasses(t *testing.T) {
	t.Helper()
	x := s.book(t, s.a, bokat.TestProviderFree, "a-x")
	end, _ := time.Parse(time.RFC3339, x["slot_end_at"].(string))
	r := s.advance(t, s.a, map[string]any{"to": end.Add(time.Minute).Format(time.RFC3339)})
	aNow := end.Add(time.Minute)
	if r.Status != 200 || r.JSON["now"] != aNow.UTC().Format(time.RFC3339Nano) {
		t.Fatalf("advance past the slot: %d %s", r.Status, r.Body)
	}
	r = s.do(request{Method: "POST", Path: "/v1/bookings/" + x["id"].(string) + "/booking-options", Header: bearer(s.a),
		Body: map[string]any{"timing": map[string]any{"preferred_time_text": "inom två veckor"}}})
	if r.Status != 200 {
		t.Fatalf("reschedule options: %d %s", r.Status, r.Body)
	}
	for _, o := range r.JSON["options"].([]any) {
		if at, _ := time.Parse(time.RFC3339, optionStart(o.(map[string]any))); !at.After(aNow) {
			t.Errorf("a reschedule option at %v, not after a's now %v", at, aNow)
		}
	}
	s.pastCancel = s.do(request{Method: "POST", Path: "/v1/bookings/" + x["id"].(string) + "/cancel",
		Body: cancelBody("a-x-cancel"), Header: bearer(s.a)})
	if s.pastCancel.Status != 200 || !serverTime(t, s.pastCancel).Equal(aNow) {
		t.Errorf("cancel of the passed booking: %d %s", s.pastCancel.Status, s.pastCancel.Body)
	}
	r = s.advance(t, s.a, map[string]any{"to": s.start.Format(time.RFC3339)})
	if r.Status != 400 || r.JSON["code"] != string(bokat.CodeValidationFailed) {
		t.Errorf("moving the clock back: %d %s, want 400 validation_failed", r.Status, r.Body)
	}
}

// providerCancels: test_cancels cancels an hour after confirmation on its
// owner's clock, and the webhook arrives.
func (s *clockScenario) providerCancels(t *testing.T) {
	t.Helper()
	var mu sync.Mutex
	var heard []string
	okRecv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Type string `json:"type"`
			Data struct {
				Booking struct {
					ID string `json:"id"`
				} `json:"booking"`
			} `json:"data"`
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		heard = append(heard, body.Type+" "+body.Data.Booking.ID)
		mu.Unlock()
		w.WriteHeader(204)
	}))
	t.Cleanup(okRecv.Close)
	s.pump() // the earlier events, relayed before the endpoint exists
	if r := s.register(s.a, okRecv.URL, "booking.cancelled"); r.Status != 201 {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	ca, cb := s.book(t, s.a, bokat.TestProviderCancels, "a-c"), s.book(t, s.b, bokat.TestProviderCancels, "b-c")
	cancelled := func() int {
		t.Helper()
		n, err := s.canceller.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := cancelled(); n != 0 {
		t.Fatalf("cancelled %d at once", n)
	}
	s.advanceBy(t, s.a, 59*time.Minute)
	if n := cancelled(); n != 0 {
		t.Fatalf("cancelled %d after 59 minutes on a's clock", n)
	}
	s.advanceBy(t, s.a, time.Minute)
	if n := cancelled(); n != 1 {
		t.Fatalf("cancelled %d after an hour on a's clock, want a's one", n)
	}
	for token, want := range map[string]map[string]any{s.a: {ca["id"].(string): "cancelled"}, s.b: {cb["id"].(string): "confirmed"}} {
		for id, status := range want {
			r := s.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(token)})
			if got := r.JSON["booking"].(map[string]any)["status"]; got != status {
				t.Errorf("booking %s: status %v, want %v", id, got, status)
			}
		}
	}
	s.pump()
	mu.Lock()
	if want := "booking.cancelled " + ca["id"].(string); len(heard) != 1 || heard[0] != want {
		t.Errorf("a's receiver heard %v, want [%s]", heard, want)
	}
	mu.Unlock()
}

// retryLadderRuns: a failing endpoint's retry ladder runs through on its
// owner's clock; the others' stay at their first attempt.
func (s *clockScenario) retryLadderRuns(t *testing.T) {
	t.Helper()
	failRecv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	t.Cleanup(failRecv.Close)
	eps := map[string]string{}
	for name, token := range map[string]string{"a": s.a, "b": s.b, "live": s.live} {
		r := s.register(token, failRecv.URL, "booking.rescheduled")
		if r.Status != 201 {
			t.Fatalf("register %s: %d %s", name, r.Status, r.Body)
		}
		eps[name] = r.JSON["endpoint"].(map[string]any)["id"].(string)
	}
	for name, token := range map[string]string{"a": s.a, "b": s.b, "live": s.live} {
		bk := s.book(t, token, map[bool]string{true: "", false: bokat.TestProviderFree}[token == s.live], name+"-ladder")
		o := s.optionOf(t, token, bk["provider_id"].(string))
		r := s.do(request{Method: "POST", Path: "/v1/bookings/" + bk["id"].(string) + "/reschedule",
			Body: rescheduleBody(o, name+"-move"), Header: bearer(token)})
		if r.Status != 200 {
			t.Fatalf("reschedule %s: %d %s", name, r.Status, r.Body)
		}
	}
	s.pump()
	for name, ep := range eps {
		if n, status := s.attempts(t, ep); n != 1 || status != outbox.DeliveryPending {
			t.Fatalf("%s's delivery after the first try: %d attempts, %s", name, n, status)
		}
	}
	for i, wait := range outbox.RetrySchedule() {
		// Jitter spreads each wait over ±10 %: not due before 90 %, due by 110 %.
		s.advanceBy(t, s.a, wait*89/100)
		s.pump()
		if n, _ := s.attempts(t, eps["a"]); n != i+1 {
			t.Fatalf("retry %d came early: %d attempts", i+1, n)
		}
		s.advanceBy(t, s.a, wait*22/100+time.Second)
		s.pump()
		if n, _ := s.attempts(t, eps["a"]); n != i+2 {
			t.Fatalf("retry %d did not come after its wait on a's clock: %d attempts", i+1, n)
		}
	}
	if n, status := s.attempts(t, eps["a"]); n != len(outbox.RetrySchedule())+1 || status != outbox.DeliveryFailed {
		t.Errorf("a's delivery after the ladder: %d attempts, %s", n, status)
	}
	for _, name := range []string{"b", "live"} {
		if n, status := s.attempts(t, eps[name]); n != 1 || status != outbox.DeliveryPending {
			t.Errorf("%s's delivery moved with a's clock: %d attempts, %s", name, n, status)
		}
	}
	if !s.clk.Now().Equal(s.start) {
		t.Fatalf("the server's clock moved")
	}
}

// livePastBookingAnswersAlike: a live booking whose slot passed on the server's
// clock answers as a's did on a's.
func (s *clockScenario) livePastBookingAnswersAlike(t *testing.T) {
	t.Helper()
	liveEnd, _ := time.Parse(time.RFC3339, s.liveBooking["slot_end_at"].(string))
	s.clk.Set(liveEnd.Add(time.Minute))
	r := s.do(request{Method: "POST", Path: "/v1/bookings/" + s.liveBooking["id"].(string) + "/cancel",
		Body: cancelBody("live-cancel"), Header: bearer(s.live)})
	if r.Status != s.pastCancel.Status || r.JSON["status"] != s.pastCancel.JSON["status"] {
		t.Errorf("a live past booking's cancel: %d %s; the test one's: %d %s", r.Status, r.Body, s.pastCancel.Status, s.pastCancel.Body)
	}
}

// TestTheTestClockIsBounded: it moves forward only, by one of seconds and
// to, at most MaxClockOffset ahead of the server's.
func TestTheTestClockIsBounded(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		tok := e.testPartner(t, "bounded")
		max := int64(testrealm.MaxClockOffset / time.Second)
		for name, body := range map[string]map[string]any{
			"empty":          {},
			"zero":           {"seconds": 0},
			"negative":       {"seconds": -5},
			"both":           {"seconds": 5, "to": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
			"past":           {"to": "2020-01-01T00:00:00Z"},
			"beyond":         {"seconds": max + 1},
			"unknown fields": {"hours": 1},
		} {
			r := e.do(request{Method: "POST", Path: "/v1/test/clock/advance", Body: body, Header: bearer(tok)})
			if r.Status != 400 || r.JSON["code"] != string(bokat.CodeValidationFailed) {
				t.Errorf("%s: %d %s, want 400 validation_failed", name, r.Status, r.Body)
			}
		}
		r := e.do(request{Method: "POST", Path: "/v1/test/clock/advance", Body: map[string]any{"seconds": max - 10}, Header: bearer(tok)})
		if r.Status != 200 || r.JSON["offset_seconds"] != float64(max-10) || r.JSON["max_offset_seconds"] != float64(max) {
			t.Fatalf("advance to near the bound: %d %s", r.Status, r.Body)
		}
		r = e.do(request{Method: "POST", Path: "/v1/test/clock/advance", Body: map[string]any{"seconds": 11}, Header: bearer(tok)})
		if r.Status != 400 || r.JSON["code"] != string(bokat.CodeValidationFailed) {
			t.Errorf("past the bound: %d %s, want 400 validation_failed", r.Status, r.Body)
		}
		r = e.do(request{Method: "GET", Path: "/v1/test/clock", Header: bearer(tok)})
		if r.JSON["offset_seconds"] != float64(max-10) {
			t.Errorf("a refused advance moved the clock: %s", r.Body)
		}
	})
}

// flakyCapture captures test messages in the store, or fails each capture
// (temporarily, as a mail server would) while down.
type flakyCapture struct {
	db   *sqlstore.DB
	mu   sync.Mutex
	down bool
}

func (c *flakyCapture) setDown(down bool) {
	c.mu.Lock()
	c.down = down
	c.mu.Unlock()
}

func (c *flakyCapture) CaptureMessage(ctx context.Context, j notify.ClaimedJob, m notify.Message, at time.Time) error {
	c.mu.Lock()
	down := c.down
	c.mu.Unlock()
	if down {
		return &notify.SendError{Temporary: true, Summary: "capture unavailable"}
	}
	return c.db.CaptureMessage(ctx, j, m, at)
}

// countingSender counts the live messages sent.
type countingSender struct {
	mu sync.Mutex
	n  int
}

func (s *countingSender) Send(context.Context, notify.Message) error {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	return nil
}

// TestFollowUpRequestsRunOnTheirOwnersClock is the proof that follow-up
// requests follow the test clock, on both engines with an injected server
// clock that stands still: a test partner's request is stamped (and its
// idempotency key kept) on its clock; its provider message, retried after
// a failed attempt, comes due when that clock has passed the retry and is
// captured at the clock's now; and its contact data and captured messages
// go once the request retention has passed on that clock, as its key, which
// then makes a new request. Another test partner's request and a live one
// do not move.
func TestFollowUpRequestsRunOnTheirOwnersClock(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newClockEnv(t, db)
		ctx := context.Background()
		start := e.clk.Now()
		a, b := e.testPartner(t, "partner a"), e.testPartner(t, "partner b")
		e.advanceBy(t, a, 2*time.Hour)
		aNow := start.Add(2 * time.Hour)

		ids := map[string]string{}
		for name, token := range map[string]string{"a": a, "b": b, "live": e.token} {
			r := e.do(request{Method: "POST", Path: "/v1/requests", Header: bearer(token),
				Body: set(set(validRequestBody(), "job_type_id", "install_faucet"), "idempotency_key", "req-"+name)})
			if r.Status != 201 {
				t.Fatalf("create %s: %d %s", name, r.Status, r.Body)
			}
			ids[name] = r.JSON["request"].(map[string]any)["id"].(string)
		}
		row := func(query, id string) (int64, int64) {
			t.Helper()
			var x, y int64
			if err := db.R().QueryRowContext(ctx, query, id).Scan(&x, &y); err != nil {
				t.Fatalf("%s for %s: %v", query, id, err)
			}
			return x, y
		}
		for name, want := range map[string]time.Time{"a": aNow, "b": start, "live": start} {
			created, _ := row(`SELECT created_at, 0 FROM follow_up_requests WHERE id = $1`, ids[name])
			keyCreated, keyExpires := row(`SELECT created_at, expires_at FROM idempotency_keys WHERE resource_id = $1`, ids[name])
			if created != want.UnixMilli() || keyCreated != want.UnixMilli() || keyExpires != want.Add(30*24*time.Hour).UnixMilli() {
				t.Errorf("%s's request created at %d, its key at %d expiring %d; want %d and 30 days later",
					name, created, keyCreated, keyExpires, want.UnixMilli())
			}
		}
		for _, name := range []string{"a", "b"} {
			if due, _ := row(`SELECT next_attempt_at, 0 FROM notification_jobs WHERE request_id = $1`, ids[name]); due != start.UnixMilli() {
				t.Errorf("%s's provider job due at %d, want at once on the server's clock (%d)", name, due, start.UnixMilli())
			}
		}

		// The first attempt fails; the retry is due a minute later on
		// each owner's clock. Only a's clock passes it.
		capture := &flakyCapture{db: db, down: true}
		live := &countingSender{}
		w, err := notify.NewWorker(notify.WorkerConfig{Store: sqlstore.Bind[notify.Tx](db), Requests: e.srv.followups,
			Sender: live, Capture: capture, Organizer: "bokat@bokat.test", Logger: slog.New(slog.DiscardHandler), Now: e.clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		runWorker := func() {
			t.Helper()
			if _, err := w.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		runWorker()
		capture.setDown(false)
		e.advanceBy(t, a, 59*time.Second)
		runWorker()
		attempts := func(name string) (int64, string) {
			t.Helper()
			var n int64
			var status string
			if err := db.R().QueryRowContext(ctx, `SELECT attempts, status FROM notification_jobs WHERE request_id = $1`,
				ids[name]).Scan(&n, &status); err != nil {
				t.Fatal(err)
			}
			return n, status
		}
		for _, name := range []string{"a", "b"} {
			if n, status := attempts(name); n != 1 || status != bokat.NotificationPending {
				t.Fatalf("%s's job before its retry is due: %d attempts, %s", name, n, status)
			}
		}
		e.advanceBy(t, a, 2*time.Second)
		aNow = aNow.Add(61 * time.Second)
		runWorker()
		if n, status := attempts("a"); n != 2 || status == bokat.NotificationPending {
			t.Errorf("a's job after a's clock passed its retry: %d attempts, %s; want the second attempt made", n, status)
		}
		if n, status := attempts("b"); n != 1 || status != bokat.NotificationPending {
			t.Errorf("b's job moved with a's clock: %d attempts, %s", n, status)
		}
		messages := func(token string) []any {
			t.Helper()
			r := e.do(request{Method: "GET", Path: "/v1/test/messages", Header: bearer(token)})
			if r.Status != 200 {
				t.Fatalf("test messages: %d %s", r.Status, r.Body)
			}
			return r.JSON["messages"].([]any)
		}
		msgs := messages(a)
		if len(msgs) == 0 {
			t.Fatal("a's request was captured for no provider")
		}
		for _, m := range msgs {
			if at := m.(map[string]any)["created_at"]; at != aNow.Format(time.RFC3339Nano) {
				t.Errorf("a's captured message at %v, want a's now %v", at, aNow)
			}
		}
		if n := len(messages(b)); n != 0 {
			t.Errorf("b has %d captured messages, want none before its retry", n)
		}

		// The request retention (30 days by default) passes on a's clock.
		retention := testrealm.NewRetention(db, privacy.Retention{Bookings: privacy.DefaultRetainBookings,
			Requests: privacy.DefaultRetainRequests}, e.clk.Now, slog.New(slog.DiscardHandler))
		erased := func() map[string]bool {
			t.Helper()
			if _, err := retention.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			out := map[string]bool{}
			for name, id := range ids {
				at, _ := row(`SELECT COALESCE(contact_erased_at, 0), 0 FROM follow_up_requests WHERE id = $1`, id)
				out[name] = at != 0
			}
			return out
		}
		e.advanceBy(t, a, privacy.DefaultRetainRequests-61*time.Second-time.Minute)
		if got := erased(); got["a"] || got["b"] || got["live"] {
			t.Fatalf("erased before the retention passed on a's clock: %v", got)
		}
		e.advanceBy(t, a, 2*time.Minute)
		if got := erased(); !got["a"] || got["b"] || got["live"] {
			t.Errorf("after the retention passed on a's clock: erased %v, want a's only", got)
		}
		if n := len(messages(a)); n != 0 {
			t.Errorf("a's erased request left %d captured messages", n)
		}

		// a's key expired 30 days after its first use on a's clock: the
		// same request with it is a new request. b's and the live key,
		// on clocks that did not move, replay.
		for name, token := range map[string]string{"a": a, "b": b, "live": e.token} {
			r := e.do(request{Method: "POST", Path: "/v1/requests", Header: bearer(token),
				Body: set(set(validRequestBody(), "job_type_id", "install_faucet"), "idempotency_key", "req-"+name)})
			if r.Status != 201 {
				t.Fatalf("create %s again: %d %s", name, r.Status, r.Body)
			}
			id := r.JSON["request"].(map[string]any)["id"].(string)
			replayed := r.Header.Get("Idempotent-Replayed") == "true"
			if wantNew := name == "a"; (id != ids[name]) != wantNew || replayed == wantNew {
				t.Errorf("%s's key used again: request %s (first %s), replayed %v; want a new request %v",
					name, id, ids[name], replayed, wantNew)
			}
		}
		if !e.clk.Now().Equal(start) {
			t.Fatal("the server's clock moved")
		}
	})
}
