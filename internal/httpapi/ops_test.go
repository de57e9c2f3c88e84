package httpapi

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/clocktest"
	"bokat/internal/ratelimit"
	"bokat/internal/ratelimit/redislimit"
	"bokat/internal/ratelimit/redistest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/telemetry"
)

// newTestClock returns a fixed clock the test moves.
func newTestClock() *clocktest.Clock {
	return clocktest.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
}

// withLimits installs a limiter and the quotas.
func withLimits(l ratelimit.Limiter, limits RateLimits, trusted ...string) envOption {
	return func(c *envConfig) {
		c.RateLimiter = l
		c.RateLimits = &limits
		if len(trusted) > 0 {
			p, err := ParseTrustedProxies(strings.Join(trusted, ","))
			if err != nil {
				panic(err)
			}
			c.TrustedProxies = p
		}
	}
}

func withMetrics(m *telemetry.Metrics) envOption {
	return func(c *envConfig) {
		c.Metrics = m
		c.ServeMetrics = true
	}
}

func smallLimits(search, writes, reads int) RateLimits {
	return RateLimits{
		Search: ratelimit.Policy{Name: "search", Quota: search, Window: time.Minute},
		Writes: ratelimit.Policy{Name: "writes", Quota: writes, Window: time.Minute},
		Reads:  ratelimit.Policy{Name: "reads", Quota: reads, Window: time.Minute},
	}
}

// classRoutes are test routes of each rate class: a search (POST on the
// search path), a write and a read.
func classRoutes() envOption {
	return func(c *envConfig) {
		c.extraRoutes = func(s *Server) []route {
			ok := func(w http.ResponseWriter, r *http.Request) error {
				s.writeJSON(w, r, 200, map[string]any{"ok": true})
				return nil
			}
			return []route{
				{method: "POST", pattern: "/v1/booking-options", contract: bokat.BookingsContractVersion, rate: rateSearch, handler: ok},
				{method: "POST", pattern: "/v1/requests", auth: authRequired, scope: bokat.ScopeRequestsCreate, contract: bokat.RequestsContractVersion, handler: ok},
				{method: "GET", pattern: "/v1/bookings/{booking_id}", auth: authRequired, scope: bokat.ScopeBookingsRead, contract: bokat.BookingsContractVersion, handler: ok},
			}
		}
	}
}

var retryAfterRe = regexp.MustCompile(`^[1-9][0-9]*$`)

// checkRateLimited asserts a v1 429 rate_limited Problem with Retry-After and
// the RateLimit header fields.
func checkRateLimited(t *testing.T, r response, path, contract string) {
	t.Helper()
	if r.Status != 429 {
		t.Fatalf("status = %d, want 429; body %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if r.JSON["code"] != "rate_limited" || r.JSON["type"] != "http://bokat.test/problems/rate_limited" ||
		r.JSON["instance"] != path || r.JSON["status"] != float64(429) || r.JSON["ok"] != false {
		t.Errorf("429 body = %s", r.Body)
	}
	if !retryAfterRe.MatchString(r.Header.Get("Retry-After")) {
		t.Errorf("Retry-After = %q, want whole seconds >= 1", r.Header.Get("Retry-After"))
	}
	if r.Header.Get("RateLimit-Policy") == "" || !strings.Contains(r.Header.Get("RateLimit"), ";r=0;") {
		t.Errorf("RateLimit-Policy = %q, RateLimit = %q", r.Header.Get("RateLimit-Policy"), r.Header.Get("RateLimit"))
	}
	checkMetadata(t, r, contract)
}

func TestRateLimitIsHitAndRecoversInProcess(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	m := telemetry.NewMetrics(clk.Now)
	e := sqliteEnv(t, withLimits(ratelimit.NewMemory(ratelimit.MemoryOptions{Now: clk.Now}), smallLimits(120, 30, 3)), withMetrics(m))
	get := func() response {
		return e.do(request{Method: "GET", Path: "/v1/capabilities", Header: bearer(e.token)})
	}
	for i := 1; i <= 3; i++ {
		r := get()
		if r.Status != 200 {
			t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
		}
		if got := r.Header.Get("RateLimit-Policy"); got != `"reads";q=3;w=60` {
			t.Errorf("RateLimit-Policy = %q", got)
		}
		// One request refills every 20 s; t counts until the whole quota is back.
		if got, want := r.Header.Get("RateLimit"), fmt.Sprintf(`"reads";r=%d;t=%d`, 3-i, 20*i); got != want {
			t.Errorf("request %d: RateLimit = %q, want %q", i, got, want)
		}
	}
	r := get()
	checkRateLimited(t, r, "/v1/capabilities", bokat.RequestsContractVersion)
	if got := r.Header.Get("Retry-After"); got != "20" {
		t.Errorf("Retry-After = %q, want 20", got)
	}
	if got := r.Header.Get("RateLimit"); got != `"reads";r=0;t=60` {
		t.Errorf("429 RateLimit = %q", got)
	}
	if s, _ := r.JSON["safe_next_step"].(string); !strings.Contains(s, "Retry-After") {
		t.Errorf("safe_next_step = %q", s)
	}
	clk.Advance(19 * time.Second)
	if r := get(); r.Status != 429 || r.Header.Get("Retry-After") != "1" {
		t.Fatalf("one second early: %d, Retry-After %q", r.Status, r.Header.Get("Retry-After"))
	}
	clk.Advance(time.Second)
	if r := get(); r.Status != 200 || r.Header.Get("RateLimit") != `"reads";r=0;t=60` {
		t.Fatalf("after Retry-After: %d %q", r.Status, r.Header.Get("RateLimit"))
	}
	clk.Advance(time.Minute)
	for i := 0; i < 3; i++ {
		if r := get(); r.Status != 200 {
			t.Fatalf("after a full window, request %d: %d", i+1, r.Status)
		}
	}
	scrape := e.do(request{Method: "GET", Path: "/metrics", NoValidate: true})
	if !strings.Contains(string(scrape.Body), `bokat_rate_limit_rejections_total{policy="reads"} 2`) {
		t.Errorf("rejections not counted:\n%s", grep(string(scrape.Body), "bokat_rate_limit"))
	}
}

func TestRateLimitClassesKeysAndShapes(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	e := sqliteEnv(t, withLimits(ratelimit.NewMemory(ratelimit.MemoryOptions{Now: clk.Now}), smallLimits(2, 1, 1), "127.0.0.1/32", "10.0.0.0/8"), classRoutes())
	other := e.partner("other", bokat.AllScopes()...)
	search := func(h map[string]string) response {
		return e.do(request{Method: "POST", Path: "/v1/booking-options", Body: `{}`, Header: h, NoValidate: true})
	}
	xff := func(v string) map[string]string { return map[string]string{"X-Forwarded-For": v} }

	t.Run("classes", func(t *testing.T) {
		w := e.do(request{Method: "POST", Path: "/v1/requests", Body: `{}`, Header: bearer(other), NoValidate: true})
		if w.Header.Get("RateLimit-Policy") != `"writes";q=1;w=60` {
			t.Errorf("write policy %q", w.Header.Get("RateLimit-Policy"))
		}
		r := e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: bearer(other), NoValidate: true})
		if r.Status != 200 || r.Header.Get("RateLimit-Policy") != `"reads";q=1;w=60` {
			t.Errorf("read: %d policy %q", r.Status, r.Header.Get("RateLimit-Policy"))
		}
		// The write quota is spent, the search quota is not.
		w = e.do(request{Method: "POST", Path: "/v1/requests", Body: `{}`, Header: bearer(other), NoValidate: true})
		checkRateLimited(t, w, "/v1/requests", bokat.RequestsContractVersion)
		if s := search(bearer(other)); s.Status != 200 || s.Header.Get("RateLimit-Policy") != `"search";q=2;w=60` {
			t.Errorf("search after writes spent: %d %q", s.Status, s.Header.Get("RateLimit-Policy"))
		}
	})

	t.Run("principals and anonymous addresses", func(t *testing.T) {
		// Each principal and each anonymous client address has its own quota.
		for name, h := range map[string]map[string]string{
			"partner":                   bearer(e.token),
			"client behind proxy":       xff("203.0.113.7"),
			"another client":            xff("203.0.113.8"),
			"client behind two proxies": xff("198.51.100.9, 10.1.2.3"),
			"ipv6 client":               xff("2001:db8:1:2::10"),
		} {
			for i := 1; i <= 2; i++ {
				if r := search(h); r.Status != 200 {
					t.Fatalf("%s request %d: %d", name, i, r.Status)
				}
			}
			if r := search(h); r.Status != 429 {
				t.Errorf("%s: third search answered %d, want 429", name, r.Status)
			}
		}
		// The same /64 shares one quota; the second hop's client was 198.51.100.9.
		if r := search(xff("2001:db8:1:2::99")); r.Status != 429 {
			t.Errorf("another address of the same IPv6 /64: %d, want 429", r.Status)
		}
		if r := search(xff("198.51.100.9")); r.Status != 429 {
			t.Errorf("the client seen through two proxies has its own spent quota: %d, want 429", r.Status)
		}
	})

	t.Run("untrusted peers cannot choose their address", func(t *testing.T) {
		clk2 := newTestClock()
		e2 := sqliteEnv(t, withLimits(ratelimit.NewMemory(ratelimit.MemoryOptions{Now: clk2.Now}), smallLimits(2, 1, 1)), classRoutes())
		for i, addr := range []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"} {
			r := e2.do(request{Method: "POST", Path: "/v1/booking-options", Body: `{}`, Header: xff(addr), NoValidate: true})
			if want := map[bool]int{true: 200, false: 429}[i < 2]; r.Status != want {
				t.Errorf("request %d with X-Forwarded-For %s: %d, want %d (the peer's own address counts)", i+1, addr, r.Status, want)
			}
		}
	})

	t.Run("a bad credential spends the address's quota", func(t *testing.T) {
		h := map[string]string{"Authorization": "Bearer bkp_wrong", "X-Forwarded-For": "192.0.2.55"}
		r := e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: h})
		checkProblem(t, r, 401, bokat.CodeUnauthorized, "/v1/bookings/b1")
		r = e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: h})
		checkRateLimited(t, r, "/v1/bookings/b1", bokat.BookingsContractVersion)
	})

	t.Run("deprecated paths answer PublicRequestError", func(t *testing.T) {
		h := xff("192.0.2.77")
		e.do(request{Method: "GET", Path: "/api/public/requests/capabilities", Header: h})
		r := e.do(request{Method: "GET", Path: "/api/public/requests/capabilities", Header: h})
		if r.Status != 429 || r.JSON["ok"] != false || r.JSON["error"] != "rate_limited" || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("legacy 429: %d %s", r.Status, r.Body)
		}
		for _, h := range []string{"Retry-After", "RateLimit-Policy", "RateLimit", "Deprecation", "Link"} {
			if r.Header.Get(h) == "" {
				t.Errorf("legacy 429 lacks %s", h)
			}
		}
	})
}

// TestOperatorProbesSpendTheControlQuota: /readyz (a database round trip)
// and /metrics spend the client IP's control quota, on the injected clock;
// /healthz spends nothing, and the API's classes are not touched.
func TestOperatorProbesSpendTheControlQuota(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	limits := smallLimits(1, 1, 1)
	limits.Control = ratelimit.Policy{Name: "control", Quota: 2, Window: time.Minute}
	e := sqliteEnv(t, withLimits(ratelimit.NewMemory(ratelimit.MemoryOptions{Now: clk.Now}), limits, "127.0.0.1/32"),
		withMetrics(telemetry.NewMetrics(nil)))
	probe := func(path, ip string) response {
		return e.do(request{Method: "GET", Path: path, Header: map[string]string{"X-Forwarded-For": ip}, NoValidate: true})
	}
	for i := 0; i < 5; i++ {
		if r := probe("/healthz", "192.0.2.1"); r.Status != 200 || r.Header.Get("RateLimit") != "" {
			t.Fatalf("/healthz %d: %d, RateLimit %q", i+1, r.Status, r.Header.Get("RateLimit"))
		}
	}
	for i, path := range []string{"/readyz", "/metrics"} {
		r := probe(path, "192.0.2.1")
		if r.Status != 200 || r.Header.Get("RateLimit-Policy") != `"control";q=2;w=60` {
			t.Fatalf("%s within the quota: %d, RateLimit-Policy %q", path, r.Status, r.Header.Get("RateLimit-Policy"))
		}
		if got, want := r.Header.Get("RateLimit"), fmt.Sprintf(`"control";r=%d;t=%d`, 1-i, 30*(i+1)); got != want {
			t.Errorf("%s: RateLimit %q, want %q", path, got, want)
		}
	}
	for _, path := range []string{"/readyz", "/metrics"} {
		r := probe(path, "192.0.2.1")
		checkProblem(t, r, 429, bokat.CodeRateLimited, path)
		if r.Header.Get("Retry-After") != "30" {
			t.Errorf("%s past the quota: Retry-After %q, want 30", path, r.Header.Get("Retry-After"))
		}
	}
	// Another address has its own quota; the API's reads are untouched.
	if r := probe("/readyz", "192.0.2.2"); r.Status != 200 {
		t.Errorf("/readyz from another address: %d", r.Status)
	}
	if r := e.do(request{Method: "GET", Path: "/v1/capabilities", Header: map[string]string{"X-Forwarded-For": "192.0.2.1"}}); r.Status != 200 {
		t.Errorf("a read after the control quota was spent: %d", r.Status)
	}
	clk.Advance(29 * time.Second)
	if r := probe("/readyz", "192.0.2.1"); r.Status != 429 {
		t.Errorf("one second early: %d", r.Status)
	}
	clk.Advance(time.Second)
	if r := probe("/readyz", "192.0.2.1"); r.Status != 200 {
		t.Errorf("after Retry-After: %d", r.Status)
	}
}

// redisURL is the Redis server of the tests.
func redisURL() string { return redistest.URL() }

// redisLimiter returns a Redis limiter on the test server with a key
// prefix unique to the test, its quotas on clk. Its client is patient
// (see patientRedisClient): these tests count requests exactly.
func redisLimiter(tb testing.TB, prefix string, clk *clocktest.Clock) *redislimit.Limiter {
	tb.Helper()
	return redislimit.New(patientRedisClient(tb, prefix), redislimit.Options{Prefix: prefix, Now: clk.Now})
}

func TestRedisLimitIsSharedByTwoInstances(t *testing.T) {
	t.Parallel()
	prefix := "bokat-test:" + strings.ToLower(rand.Text()[:12]) + ":"
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	// Reads: 4 per 4 s, so one comes back every second. Both instances
	// read one clock, which moves only when the test says.
	limits := smallLimits(10, 10, 4)
	limits.Reads.Window = 4 * time.Second
	clk := newTestClock()
	a := newTestEnv(t, db, withLimits(redisLimiter(t, prefix, clk), limits))
	b := newTestEnv(t, db, withLimits(redisLimiter(t, prefix, clk), limits))
	get := func(e *testEnv) response {
		return e.do(request{Method: "GET", Path: "/v1/capabilities", Header: bearer(a.token)})
	}
	for i, e := range []*testEnv{a, b, a, b} {
		if r := get(e); r.Status != 200 || r.Header.Get("RateLimit-Policy") != `"reads";q=4;w=4` {
			t.Fatalf("request %d: %d %q", i+1, r.Status, r.Header.Get("RateLimit-Policy"))
		}
	}
	var refused response
	for _, e := range []*testEnv{a, b} {
		refused = get(e)
		checkRateLimited(t, refused, "/v1/capabilities", bokat.RequestsContractVersion)
	}
	if got := refused.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1", got)
	}
	// A principal's quota is its own on both instances.
	if r := b.do(request{Method: "GET", Path: "/v1/capabilities", Header: bearer(b.token)}); r.Status != 200 {
		t.Fatalf("another principal was refused: %d", r.Status)
	}
	clk.Advance(time.Second - time.Millisecond)
	if r := get(b); r.Status != 429 {
		t.Fatalf("1 ms before Retry-After: %d, want 429", r.Status)
	}
	clk.Advance(time.Millisecond)
	if r := get(b); r.Status != 200 {
		t.Fatalf("after Retry-After: %d", r.Status)
	}
	if r := get(a); r.Status != 429 {
		t.Fatalf("a second request after one refill: %d, want 429", r.Status)
	}
}

func TestRedisDownFailsOpenWithAWarningAndAMetric(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "redis://" + ln.Addr().String()
	ln.Close()
	c, err := redislimit.Dial(dead)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m := telemetry.NewMetrics(nil)
	// The server's clock, which spaces the warnings 10 s apart, and the
	// limiter's, which times its cool-down, stand still: however slowly
	// the five requests run, exactly one warning is due.
	clk := newTestClock()
	e := sqliteEnv(t, withLimits(redislimit.New(c, redislimit.Options{Now: clk.Now}), smallLimits(1, 1, 1)), withMetrics(m),
		func(c *envConfig) { c.Now = clk.Now })
	for i := 0; i < 5; i++ {
		r := e.do(request{Method: "GET", Path: "/v1/capabilities"})
		if r.Status != 200 || r.Header.Get("RateLimit") != "" {
			t.Fatalf("request %d with Redis down: %d, RateLimit %q", i+1, r.Status, r.Header.Get("RateLimit"))
		}
	}
	if n := strings.Count(e.logs.String(), `"msg":"rate limiter unavailable: requests pass unchecked"`); n != 1 {
		t.Errorf("%d warnings logged, want exactly 1 per 10 s", n)
	}
	scrape := e.do(request{Method: "GET", Path: "/metrics", NoValidate: true})
	if !strings.Contains(string(scrape.Body), "bokat_rate_limit_backend_errors_total 5") {
		t.Errorf("backend errors not counted:\n%s", grep(string(scrape.Body), "bokat_rate_limit"))
	}
}

// grep returns the lines of s containing sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestMetricsAfterTraffic(t *testing.T) {
	t.Parallel()
	m := telemetry.NewMetrics(nil)
	e := sqliteEnv(t, withMetrics(m), classRoutes())
	for i := 0; i < 3; i++ {
		e.do(request{Method: "GET", Path: "/v1/capabilities"})
	}
	e.do(request{Method: "GET", Path: "/v1/bookings/b-123", Header: bearer(e.token), NoValidate: true})
	e.do(request{Method: "GET", Path: "/v1/bookings/b-456", Header: bearer("bkp_nope")})
	e.do(request{Method: "GET", Path: "/no/such/path", NoValidate: true})
	m.BookingConfirmed()
	m.BookingConfirmed()
	m.BookingCancelled()
	m.WebhookDelivery(telemetry.ResultDelivered)
	m.WebhookDelivery("weird-result")
	m.Notification("customer", telemetry.ResultSent)

	r := e.do(request{Method: "GET", Path: "/metrics", NoValidate: true})
	body := string(r.Body)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`bokat_http_requests_total{method="GET",route="/v1/capabilities",status="200"} 3`,
		`bokat_http_requests_total{method="GET",route="/v1/bookings/{booking_id}",status="200"} 1`,
		`bokat_http_requests_total{method="GET",route="/v1/bookings/{booking_id}",status="401"} 1`,
		`bokat_http_requests_total{method="GET",route="/",status="404"} 1`,
		`bokat_http_request_duration_seconds_count{method="GET",route="/v1/capabilities"} 3`,
		`bokat_http_request_duration_seconds_bucket{method="GET",route="/v1/capabilities",le="+Inf"} 3`,
		`bokat_booking_changes_total{change="confirmed"} 2`,
		`bokat_booking_changes_total{change="cancelled"} 1`,
		`bokat_booking_changes_total{change="rescheduled"} 0`,
		`bokat_webhook_deliveries_total{result="delivered"} 1`,
		`bokat_webhook_deliveries_total{result="other"} 1`,
		`bokat_webhook_deliveries_total{result="failed"} 0`,
		`bokat_notifications_total{recipient="customer",result="sent"} 1`,
		`bokat_notifications_total{recipient="provider",result="failed"} 0`,
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Raw paths (with ids) never become labels.
	if strings.Contains(body, "b-123") || strings.Contains(body, "/no/such/path") {
		t.Error("a raw path leaked into the labels")
	}
	// The scrape itself is counted too, under its own route.
	again := string(e.do(request{Method: "GET", Path: "/metrics", NoValidate: true}).Body)
	if !strings.Contains(again, `bokat_http_requests_total{method="GET",route="/metrics",status="200"} 1`) {
		t.Errorf("the scrape was not counted:\n%s", grep(again, "/metrics"))
	}
}

func TestMetricsCanBeLeftOffTheAPIListener(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t, func(c *envConfig) { c.Metrics = telemetry.NewMetrics(nil) })
	r := e.do(request{Method: "GET", Path: "/metrics", NoValidate: true})
	checkProblem(t, r, 404, bokat.CodeNotFound, "/metrics")
}

func TestHealthAndReadiness(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		// The workers' silence is measured on a clock that stands still,
		// and the checks may take a minute: a busy machine makes neither
		// fail (stopping the worker is what must).
		hb := telemetry.NewHeartbeats(newTestClock().Now)
		worker := hb.Register("notify", time.Minute)
		var e *testEnv
		e = newTestEnv(t, db, func(c *envConfig) {
			c.Health = telemetry.NewHealth(c.Logger,
				telemetry.Check{Name: "database", Run: func(ctx context.Context) error {
					if err := db.Ping(ctx); err != nil {
						return telemetry.Failed("unreachable", err)
					}
					return nil
				}},
				telemetry.Check{Name: "schema", Run: func(ctx context.Context) error {
					if err := db.CheckSchema(ctx, false); err != nil {
						return telemetry.Failed("not current", err)
					}
					return nil
				}},
				telemetry.Check{Name: "workers", Run: hb.Check},
			).WithTimeout(time.Minute)
		})
		live := e.do(request{Method: "GET", Path: "/healthz", NoValidate: true})
		if live.Status != 200 || live.JSON["status"] != "ok" || live.JSON["api_request_id"] != nil {
			t.Fatalf("/healthz: %d %s", live.Status, live.Body)
		}
		ready := e.do(request{Method: "GET", Path: "/readyz", NoValidate: true})
		if ready.Status != 200 || ready.JSON["status"] != "ok" || len(ready.JSON["checks"].([]any)) != 3 {
			t.Fatalf("/readyz: %d %s", ready.Status, ready.Body)
		}

		// A stopped worker makes the instance unready.
		worker.Stop()
		r := e.do(request{Method: "GET", Path: "/readyz", NoValidate: true})
		if r.Status != 503 || fmt.Sprint(r.JSON["failing"]) != "[workers]" || !strings.Contains(string(r.Body), "notify stopped") {
			t.Fatalf("stopped worker: %d %s", r.Status, r.Body)
		}
		hb.Register("notify", time.Minute)

		// The database goes away.
		secret := dropDatabase(t, db)
		r = e.do(request{Method: "GET", Path: "/readyz", NoValidate: true})
		if r.Status != 503 || r.JSON["status"] != "fail" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("without a database: %d %s", r.Status, r.Body)
		}
		failing := fmt.Sprint(r.JSON["failing"])
		if !strings.Contains(failing, "database") || !strings.Contains(failing, "schema") || strings.Contains(failing, "workers") {
			t.Errorf("failing = %s, want database and schema", failing)
		}
		for _, leak := range []string{secret, "postgres://", "password", "dial", "sql:"} {
			if leak != "" && strings.Contains(string(r.Body), leak) {
				t.Errorf("the readiness body leaks %q: %s", leak, r.Body)
			}
		}
		// Liveness does not depend on the database.
		if r := e.do(request{Method: "GET", Path: "/healthz", NoValidate: true}); r.Status != 200 {
			t.Errorf("/healthz without a database: %d", r.Status)
		}
	})
}

// dropDatabase makes db unreachable: SQLite closes the store; PostgreSQL
// drops the test's database under it. It returns the database's name.
func dropDatabase(t *testing.T, db *sqlstore.DB) string {
	t.Helper()
	if db.Engine() == sqlstore.SQLite {
		db.Close()
		return ""
	}
	var name string
	if err := db.R().QueryRowContext(context.Background(), `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("pgx", os.Getenv(sqlstoretest.PostgresURLEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(fmt.Sprintf(`DROP DATABASE %s WITH (FORCE)`, name)); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestSearchRoutesAreClassedAsSearch(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	for _, rt := range e.srv.routes() {
		isSearch := strings.HasSuffix(rt.pattern, "/booking-options")
		if isSearch && rt.rate != rateSearch {
			t.Errorf("%s %s: set rate: rateSearch in routes.go (search 120/min, not writes)", rt.method, rt.pattern)
		}
		if !isSearch && rt.rate == rateSearch {
			t.Errorf("%s %s is classed as search", rt.method, rt.pattern)
		}
	}
}

func TestParseTrustedProxiesAndAddresses(t *testing.T) {
	t.Parallel()
	got, err := ParseTrustedProxies(" 10.0.0.0/8, 192.168.1.7 ,::1, 2001:db8::/32,")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[10.0.0.0/8 192.168.1.7/32 ::1/128 2001:db8::/32]" {
		t.Errorf("prefixes = %v", got)
	}
	if _, err := ParseTrustedProxies("10.0.0.0/8,proxy.internal"); err == nil || !strings.Contains(err.Error(), "proxy.internal") {
		t.Errorf("err = %v", err)
	}
	for in, want := range map[string]string{
		"127.0.0.1:5555":        "127.0.0.1",
		"[::ffff:10.1.2.3]:80":  "10.1.2.3",
		"[2001:db8::1]:443":     "2001:db8::1",
		"203.0.113.9":           "203.0.113.9",
		"[2001:db8::2]":         "2001:db8::2",
		"not-an-address":        "invalid IP",
		"":                      "invalid IP",
		"203.0.113.9:80:80:bad": "invalid IP",
	} {
		if got := parseAddr(in).String(); got != want {
			t.Errorf("parseAddr(%q) = %s, want %s", in, got, want)
		}
	}
}
