package httpapi

import (
	"testing"

	"bokat/internal/clocktest"
	"bokat/internal/ratelimit"
	"bokat/internal/telemetry"
)

// metricSum adds up every series of the named family in m (0 when it has
// none).
func metricSum(t testing.TB, m *telemetry.Metrics, name string) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, mt := range f.GetMetric() {
			switch {
			case mt.GetCounter() != nil:
				sum += mt.GetCounter().GetValue()
			case mt.GetHistogram() != nil:
				sum += float64(mt.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

// liveActivity is what the live metrics count: REST requests and their
// durations, MCP tool results and committed booking changes.
var liveActivity = []string{"bokat_http_requests_total", "bokat_http_request_duration_seconds",
	"bokat_mcp_tool_results_total", "bokat_booking_changes_total"}

// TestTestActivityNeverCountsInLiveMetrics (issue 25): a test credential's
// REST requests, booking changes and MCP tool calls, on /mcp too, leave
// every live metric where it was; the same calls with a live credential
// are counted, so the check can fail.
func TestTestActivityNeverCountsInLiveMetrics(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		m := e.srv.metrics
		_, opts := e.searchAs(t, "")
		e.moveToTestRealm(t, optionProvider(opts[0]))
		// A request is counted after its handler returns, and a search's
		// answer is larger than the connection's buffer: the client can read
		// it before the count lands. Wait for the live search's count, so a
		// late one is never taken for the test activity's.
		clocktest.Wait(t, "the live search counted", func() bool {
			return metricSum(t, m, "bokat_http_requests_total") >= 1 &&
				metricSum(t, m, "bokat_http_request_duration_seconds") >= 1
		})
		before := map[string]float64{}
		for _, name := range liveActivity {
			before[name] = metricSum(t, m, name)
		}
		act := func(token, key string) {
			t.Helper()
			_, found := e.searchAs(t, token)
			r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(found[0], key), Header: bearer(token)})
			if r.Status != 201 {
				t.Fatalf("confirm: %d %s", r.Status, r.Body)
			}
			id := r.JSON["booking"].(map[string]any)["id"].(string)
			e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(token)})
			s := e.mcpConnect(t, mcpEras[0], token)
			s.call("get_capabilities", map[string]any{}).success(t, "capabilities")
			s.call("search_booking_options", faucetSearch()).success(t, "search")
			s.call("get_booking_status", map[string]any{"booking_id": id}).success(t, "status")
		}

		act(e.testPartner(t, "integrator"), "metrics-test")
		for _, name := range liveActivity {
			if got := metricSum(t, m, name); got != before[name] {
				t.Errorf("test activity moved %s from %v to %v", name, before[name], got)
			}
		}

		act(e.token, "metrics-live")
		// The live calls' counts may land after their answers (above).
		clocktest.Wait(t, "the live activity counted", func() bool {
			for _, name := range liveActivity {
				if metricSum(t, m, name) <= before[name] {
					return false
				}
			}
			return toolResults(t, m, "get_booking_status", "200") >= 1
		})
		for _, c := range []struct {
			tool, status string
		}{{"get_capabilities", "200"}, {"search_booking_options", "200"}, {"get_booking_status", "200"}} {
			if got := toolResults(t, m, c.tool, c.status); got != 1 {
				t.Errorf("live %s %s: %v, want 1", c.tool, c.status, got)
			}
		}
		for _, name := range liveActivity {
			if got := metricSum(t, m, name); got <= before[name] {
				t.Errorf("live activity left %s at %v", name, got)
			}
		}
		if got := metricSum(t, m, "bokat_booking_changes_total") - before["bokat_booking_changes_total"]; got != 1 {
			t.Errorf("live booking changes = %v, want the 1 confirmation", got)
		}
	}, func(c *envConfig) { withMetrics(telemetry.NewMetrics(nil))(c) }) // fresh metrics for each engine
}

// TestTestRateLimitRejectionsAreNotCounted: a test credential that spends
// its quota gets its 429 like a live one, but only the live one's is
// counted.
func TestTestRateLimitRejectionsAreNotCounted(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	m := telemetry.NewMetrics(clk.Now)
	e := sqliteEnv(t, withLimits(ratelimit.NewMemory(ratelimit.MemoryOptions{Now: clk.Now}), smallLimits(120, 30, 2)), withMetrics(m))
	spend := func(token string) {
		t.Helper()
		for i := 1; i <= 3; i++ {
			r := e.do(request{Method: "GET", Path: "/v1/capabilities", Header: bearer(token)})
			if want := map[bool]int{true: 429, false: 200}[i == 3]; r.Status != want {
				t.Fatalf("request %d: %d, want %d", i, r.Status, want)
			}
		}
	}
	spend(e.testPartner(t, "integrator"))
	if got := metricSum(t, m, "bokat_rate_limit_rejections_total"); got != 0 {
		t.Errorf("a test credential's 429 counted: %v", got)
	}
	spend(e.token)
	if got := metricSum(t, m, "bokat_rate_limit_rejections_total"); got != 1 {
		t.Errorf("rejections = %v, want the live credential's 1", got)
	}
}
