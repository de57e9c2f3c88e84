package httpapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"bokat"
	"bokat/internal/ratelimit"
	"bokat/internal/telemetry"
)

// A tool call passes the operation step of its REST route: the same text
// check of path values, on both engines, and its result is counted by its
// status as a REST response is.

// TestMCPToolsRefuseControlCharactersInPathValues: a booking_id with NUL
// or DEL answers over MCP what REST answers, 400 validation_failed naming
// booking_id (path), as an error result; the store never sees it (on
// PostgreSQL a NUL would be an internal_error).
func TestMCPToolsRefuseControlCharactersInPathValues(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e = e.withDemoSupply()
		m := e.srv.metrics
		o := e.options(t, faucetSearch())[0]
		ids := []string{"bkg_\u0000x", "bk\u007fx"}
		for i, id := range ids {
			rest := e.do(request{Method: "GET", Path: "/v1/bookings/" + url.PathEscape(id), Header: bearer(e.token)})
			checkProblem(t, rest, 400, bokat.CodeValidationFailed, "/v1/bookings/"+url.PathEscape(id))
			tools := []struct {
				name string
				args map[string]any
			}{
				{"get_booking_status", map[string]any{}},
				{"cancel_booking", cancelBody("ctl-cancel-" + string(rune('a'+i)))},
				{"reschedule_booking", rescheduleBody(o, "ctl-move-"+string(rune('a'+i)))},
			}
			for _, version := range mcpEras {
				s := e.mcpConnect(t, version, e.token)
				for _, tl := range tools {
					args := with(tl.args, func(m map[string]any) { m["booking_id"] = id })
					got := s.call(tl.name, args).problem(t, version+" "+tl.name+" "+strconv.Quote(id), bokat.CodeValidationFailed, 400)
					issues, _ := got["issues"].([]any)
					if !slices.ContainsFunc(issues, func(v any) bool { s, _ := v.(string); return strings.HasPrefix(s, "booking_id (path): ") }) {
						t.Errorf("%s %s: issues %v, want booking_id (path)", version, tl.name, issues)
					}
					if !jsonEqual(t, mustJSON(t, got["issues"]), mustJSON(t, rest.JSON["issues"])) {
						t.Errorf("%s %s: issues %v, REST says %v", version, tl.name, got["issues"], rest.JSON["issues"])
					}
				}
			}
		}
		if n := e.count(t, `SELECT COUNT(*) FROM bookings`); n != 0 {
			t.Errorf("%d bookings", n)
		}
		want := float64(len(ids) * len(mcpEras))
		for _, tool := range []string{"get_booking_status", "cancel_booking", "reschedule_booking"} {
			if got := toolResults(t, m, tool, "400"); got != want {
				t.Errorf("bokat_mcp_tool_results_total{tool=%q,status=\"400\"} = %v, want %v", tool, got, want)
			}
		}
	}, func(c *envConfig) { withMetrics(telemetry.NewMetrics(nil))(c) })
}

// toolResults reads bokat_mcp_tool_results_total{tool, status} from m.
func toolResults(t testing.TB, m *telemetry.Metrics, tool, status string) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "bokat_mcp_tool_results_total" {
			continue
		}
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["tool"] == tool && labels["status"] == status {
				return mt.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestMCPToolResultsAreCounted: successes, Problems and consent forms are
// counted by tool and status, and a tool call is not counted as a REST
// request of its route.
func TestMCPToolResultsAreCounted(t *testing.T) {
	t.Parallel()
	m := telemetry.NewMetrics(nil)
	e := sqliteEnv(t, withMetrics(m)).withDemoSupply()
	s := e.mcpConnect(t, mcpEras[0], e.token)
	s.call("get_capabilities", map[string]any{}).success(t, "capabilities")
	s.call("get_booking_status", map[string]any{"booking_id": "bk_nothing"}).success(t, "status of nothing")
	s.call("cancel_booking", with(cancelBody("count-1"), func(m map[string]any) { m["booking_id"] = "bk_nothing" })).
		problem(t, "cancel of nothing", bokat.CodeBookingNotFound, 404)
	res := e.rawCall(t, e.token, "confirm_booking", confirmBody(e.options(t, faucetSearch())[0], "count-2"), "", false)
	if res["resultType"] != "input_required" {
		t.Fatalf("consent form: %v", res)
	}
	for _, c := range []struct {
		tool, status string
		want         float64
	}{
		{"get_capabilities", "200", 1}, {"get_booking_status", "200", 1}, {"cancel_booking", "404", 1},
		{"confirm_booking", "input_required", 1}, {"confirm_booking", "201", 0},
	} {
		if got := toolResults(t, m, c.tool, c.status); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.tool, c.status, got, c.want)
		}
	}
	scrape := string(e.do(request{Method: "GET", Path: "/metrics", NoValidate: true}).Body)
	if strings.Contains(scrape, `route="/v1/bookings/{booking_id}/cancel"`) {
		t.Errorf("a tool call was counted as a REST request:\n%s", grep(scrape, "/v1/bookings"))
	}
}

// TestMCPOlderProtocolNeverElicits: a 2025-era tools/call whose _meta
// declares form elicitation cannot be asked for input (its stateless
// session has no way back to the client): it books with the caller's
// declared consent, as docs/mcp.md says, instead of answering a JSON-RPC
// error.
func TestMCPOlderProtocolNeverElicits(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e = e.withDemoSupply()
		for _, version := range mcpEras {
			if version >= "2026-07-28" {
				continue
			}
			o := e.options(t, faucetSearch())[0]
			params := map[string]any{"name": "confirm_booking", "arguments": confirmBody(o, "old-eli-"+version), "_meta": map[string]any{
				"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
			}}
			body := string(mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
			resp, raw := e.mcpPost(t, map[string]string{"MCP-Protocol-Version": version, "Authorization": "Bearer " + e.token}, body)
			var msg struct {
				Result *sdk.CallToolResult `json:"result"`
				Error  json.RawMessage     `json:"error"`
			}
			if resp.StatusCode != 200 || json.Unmarshal(raw, &msg) != nil || msg.Error != nil || msg.Result == nil {
				t.Fatalf("%s: %d %s", version, resp.StatusCode, raw)
			}
			content, _ := msg.Result.StructuredContent.(map[string]any)
			if msg.Result.IsError || content["booking_created"] != true {
				t.Fatalf("%s: %s", version, raw)
			}
			if m, _ := e.consentMethods(t, content["booking"].(map[string]any)["id"].(string)); m != "caller_declared" {
				t.Errorf("%s: consent_method %q, want caller_declared", version, m)
			}
		}
	})
}

// TestMCPControlMessagesSpendTheControlQuota: initialize, tools/list, ping
// and notifications spend the client IP's control quota, one per message,
// on the injected clock and whatever the credential; a tool call spends its
// operation's class instead.
func TestMCPControlMessagesSpendTheControlQuota(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	limits := smallLimits(10, 10, 10)
	limits.Control = ratelimit.Policy{Name: "control", Quota: 4, Window: time.Minute}
	e := sqliteEnv(t, withLimits(ratelimit.NewMemory(ratelimit.MemoryOptions{Now: clk.Now}), limits, "127.0.0.1/32"))
	post := func(ip, token, body string) (*http.Response, []byte) {
		h := map[string]string{"MCP-Protocol-Version": "2025-11-25", "X-Forwarded-For": ip}
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		return e.mcpPost(t, h, body)
	}
	const (
		initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},` +
			`"clientInfo":{"name":"t","version":"1"}}}`
		list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		ping = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
		call = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_capabilities","arguments":{}}}`
	)
	for i, body := range []string{initialize, list, ping} {
		resp, raw := post("192.0.2.1", "", body)
		if resp.StatusCode != 200 || resp.Header.Get("RateLimit-Policy") != `"control";q=4;w=60` {
			t.Fatalf("message %d: %d %q %s", i+1, resp.StatusCode, resp.Header.Get("RateLimit-Policy"), raw)
		}
	}
	// A tool call spends its operation's class (reads), not the control quota.
	if resp, raw := post("192.0.2.1", "", call); resp.StatusCode != 200 || !strings.Contains(string(raw), `"result"`) ||
		strings.Contains(string(raw), `"isError":true`) || resp.Header.Get("RateLimit-Policy") != "" {
		t.Fatalf("tool call: %d %q %s", resp.StatusCode, resp.Header.Get("RateLimit-Policy"), raw)
	}
	// The last unit of the quota, then a credential does not buy more: the
	// quota is the address's.
	if resp, _ := post("192.0.2.1", e.token, list); resp.StatusCode != 200 {
		t.Fatalf("fourth message: %d", resp.StatusCode)
	}
	resp, raw := post("192.0.2.1", e.token, list)
	var problem map[string]any
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "15" || json.Unmarshal(raw, &problem) != nil ||
		problem["code"] != string(bokat.CodeRateLimited) {
		t.Fatalf("past the quota: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}
	// A batch is charged per message: five messages from a fresh address
	// spend more than its four units.
	if resp, _ := post("192.0.2.2", "", `[`+ping+`,`+ping+`,`+ping+`,`+ping+`,`+ping+`]`); resp.StatusCode != 429 {
		t.Errorf("a batch of five messages with a quota of four: %d", resp.StatusCode)
	}
	if resp, _ := post("192.0.2.3", "", ping); resp.StatusCode != 200 {
		t.Errorf("another address: %d", resp.StatusCode)
	}
	clk.Advance(14 * time.Second)
	if resp, _ := post("192.0.2.1", "", ping); resp.StatusCode != 429 {
		t.Errorf("one second early: %d", resp.StatusCode)
	}
	clk.Advance(time.Second)
	if resp, raw := post("192.0.2.1", "", ping); resp.StatusCode != 200 {
		t.Errorf("after Retry-After: %d %s", resp.StatusCode, raw)
	}
}
