package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/mcp"
	"bokat/internal/ratelimit"
)

// The MCP surface, tested with the official SDK's client over real HTTP.

// mcpEras are the protocol versions served; each test that talks to tools
// runs for every one of them and checks that it was negotiated.
var mcpEras = mcp.ProtocolVersions

// recordingTransport adds a credential to every request and remembers the
// last response's status and WWW-Authenticate header.
type recordingTransport struct {
	token string
	mu    sync.Mutex
	last  *http.Response
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if rt.token != "" {
		r.Header.Set("Authorization", "Bearer "+rt.token)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		rt.mu.Lock()
		rt.last = resp
		rt.mu.Unlock()
	}
	return resp, err
}

func (rt *recordingTransport) lastResponse() *http.Response {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.last
}

// mcpSession is a connected client with the tools as listed.
type mcpSession struct {
	t         testing.TB
	cs        *sdk.ClientSession
	transport *recordingTransport
	tools     map[string]*sdk.Tool
	outputs   map[string]*jsonschema.Schema
}

// mcpConnect connects to e's /mcp at the protocol version with the token
// ("" for none), fails unless that version was negotiated, and lists the
// tools.
func (e *testEnv) mcpConnect(t testing.TB, version, token string) *mcpSession {
	t.Helper()
	ctx := context.Background()
	rt := &recordingTransport{token: token}
	client := sdk.NewClient(&sdk.Implementation{Name: "bokat-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.http.URL + "/mcp", HTTPClient: &http.Client{Transport: rt}},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol version %s, want %s", got, version)
	}
	s := &mcpSession{t: t, cs: cs, transport: rt, tools: map[string]*sdk.Tool{}, outputs: map[string]*jsonschema.Schema{}}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for _, tool := range list.Tools {
		s.tools[tool.Name] = tool
		s.outputs[tool.Name] = compileSchema(t, tool.OutputSchema)
	}
	return s
}

// compiledSchemas holds the schemas compileSchema compiled, by their JSON:
// every session of the tests lists the same tools.
var compiledSchemas sync.Map // string -> *jsonschema.Schema

// compileSchema compiles a tool's schema, once per schema.
func compileSchema(t testing.TB, schema any) *jsonschema.Schema {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := compiledSchemas.Load(string(raw)); ok {
		return s.(*jsonschema.Schema)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("urn:tool", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("urn:tool")
	if err != nil {
		t.Fatalf("compile %.200s: %v", raw, err)
	}
	compiledSchemas.Store(string(raw), s)
	return s
}

// toolResult is a tool's answer: the structured content and whether it is
// an error result.
type toolResult struct {
	isError bool
	content map[string]any
}

// call calls a tool and checks the result's shape: the text block is the
// structured content's JSON, the structured content (a success or a
// Problem) validates against the tool's outputSchema, which clients check
// on errors too, and an error carries the Problem fields.
func (s *mcpSession) call(name string, args any) toolResult {
	s.t.Helper()
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("tools/call %s: %v", name, err)
	}
	content, ok := res.StructuredContent.(map[string]any)
	if !ok {
		s.t.Fatalf("%s: structuredContent is %T, want an object", name, res.StructuredContent)
	}
	if len(res.Content) != 1 {
		s.t.Fatalf("%s: %d content blocks, want 1", name, len(res.Content))
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	switch {
	case !ok:
		s.t.Errorf("%s: the content block is %T, want text", name, res.Content[0])
	case !res.IsError && content["options"] != nil:
		checkCompactText(s.t, name, []byte(text.Text), content)
	case !jsonEqual(s.t, []byte(text.Text), mustJSON(s.t, content)):
		s.t.Errorf("%s: the text block is not the structured content's JSON", name)
	}
	if res.IsError {
		for _, field := range []string{"code", "status", "detail", "type", "title"} {
			if _, ok := content[field]; !ok {
				s.t.Errorf("%s: error result lacks the Problem field %s: %v", name, field, content)
			}
		}
		if content["ok"] != false {
			s.t.Errorf("%s: error result has ok %v", name, content["ok"])
		}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustJSON(s.t, content)))
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.outputs[name].Validate(inst); err != nil {
		s.t.Errorf("%s: structuredContent (isError %v) does not validate against the outputSchema: %v", name, res.IsError, err)
	}
	return toolResult{isError: res.IsError, content: content}
}

// success fails unless r is a success, and returns its content.
func (r toolResult) success(t testing.TB, what string) map[string]any {
	t.Helper()
	if r.isError {
		t.Fatalf("%s: error result %v", what, r.content)
	}
	return r.content
}

// problem fails unless r is an error result with the code and status.
func (r toolResult) problem(t testing.TB, what string, code bokat.Code, status int) map[string]any {
	t.Helper()
	if !r.isError || r.content["code"] != string(code) || r.content["status"] != float64(status) {
		t.Fatalf("%s: got isError %v %v, want the %d %s Problem", what, r.isError, r.content, status, code)
	}
	return r.content
}

func TestMCPToolsAreDescribed(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	want := []struct {
		name                                         string
		readOnly, destructive, idempotent, openWorld bool
		args                                         []string // some required arguments
	}{
		{"get_capabilities", true, false, true, false, nil},
		{"search_booking_options", true, false, true, false, []string{"vertical_id", "job_type_id", "location"}},
		{"confirm_booking", false, false, true, true, []string{"booking_option_id", "user_consent_confirmed", "idempotency_key"}},
		{"get_booking_status", true, false, true, false, []string{"booking_id"}},
		{"cancel_booking", false, true, true, true, []string{"booking_id", "user_confirmation_confirmed", "idempotency_key"}},
		{"reschedule_booking", false, true, true, true, []string{"booking_id", "booking_option_id", "idempotency_key"}},
		{"search_reschedule_options", true, false, true, false, []string{"booking_id", "timing"}},
		{"create_follow_up_request", false, false, true, true, []string{"vertical_id", "customer", "user_consent_confirmed"}},
	}
	for _, version := range mcpEras {
		t.Run(version, func(t *testing.T) {
			s := e.mcpConnect(t, version, "")
			if ins := s.cs.InitializeResult().Instructions; !strings.Contains(ins, "booking_created") || !strings.Contains(ins, "search_booking_options") {
				t.Errorf("instructions do not state the rules: %q", ins)
			}
			if len(s.tools) != len(want) {
				t.Errorf("%d tools, want %d", len(s.tools), len(want))
			}
			for _, w := range want {
				tool := s.tools[w.name]
				if tool == nil {
					t.Errorf("tool %s is missing", w.name)
					continue
				}
				if tool.Title == "" || len(tool.Description) < 80 {
					t.Errorf("%s: title %q, description %q", w.name, tool.Title, tool.Description)
				}
				a := tool.Annotations
				if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
					t.Fatalf("%s: annotations leave hints unset: %+v", w.name, a)
				}
				if a.ReadOnlyHint != w.readOnly || *a.DestructiveHint != w.destructive || a.IdempotentHint != w.idempotent || *a.OpenWorldHint != w.openWorld {
					t.Errorf("%s: hints read-only %v destructive %v idempotent %v open-world %v, want %v %v %v %v", w.name,
						a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint, w.readOnly, w.destructive, w.idempotent, w.openWorld)
				}
				in, _ := tool.InputSchema.(map[string]any)
				out, _ := tool.OutputSchema.(map[string]any)
				if in["type"] != "object" || out["type"] != "object" {
					t.Errorf("%s: schema types %v / %v, want object", w.name, in["type"], out["type"])
				}
				required, _ := in["required"].([]any)
				for _, arg := range w.args {
					if !slices.Contains(required, any(arg)) {
						t.Errorf("%s: %s is not a required argument (required %v)", w.name, arg, required)
					}
				}
				if raw := mustJSON(t, tool); bytes.Contains(raw, []byte(`"$ref"`)) {
					t.Errorf("%s: the schemas are not self-contained", w.name)
				}
			}
		})
	}
}

// TestMCPSchemasComeFromTheContract: a tool's schemas are the contract's,
// not a second copy: a constraint of the document shows in the tool.
func TestMCPSchemasComeFromTheContract(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	s := e.mcpConnect(t, mcpEras[0], "")
	want, err := e.contract.OperationSchemas("POST", "/v1/bookings/{booking_id}/cancel")
	if err != nil {
		t.Fatal(err)
	}
	in := s.tools["cancel_booking"].InputSchema.(map[string]any)
	props := in["properties"].(map[string]any)
	for name, schema := range want.Body["properties"].(map[string]any) {
		if !jsonEqual(t, mustJSON(t, props[name]), mustJSON(t, schema)) {
			t.Errorf("cancel_booking.%s = %s, want the contract's %s", name, mustJSON(t, props[name]), mustJSON(t, schema))
		}
	}
	if in["additionalProperties"] != false {
		t.Errorf("cancel_booking admits unknown arguments: %v", in["additionalProperties"])
	}
	id := props["booking_id"].(map[string]any)
	if !jsonEqual(t, mustJSON(t, id["pattern"]), mustJSON(t, want.PathParams["booking_id"]["pattern"])) {
		t.Errorf("booking_id schema %v, want the path parameter's %v", id, want.PathParams["booking_id"])
	}
}

func TestMCPBookingFlow(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		other := e.partner("other", bokat.AllScopes()...)
		for i, version := range mcpEras {
			t.Run(version, func(t *testing.T) {
				key := func(s string) string { return fmt.Sprintf("mcp-%d-%s", i, s) }
				anon := e.mcpConnect(t, version, "")
				s := e.mcpConnect(t, version, e.token)
				intruder := e.mcpConnect(t, version, other)

				caps := anon.call("get_capabilities", map[string]any{}).success(t, "capabilities")
				if caps["ok"] != true || caps["supported_verticals"] == nil {
					t.Errorf("capabilities: %v", caps)
				}
				anon.call("get_capabilities", map[string]any{"surprise": 1}).problem(t, "capabilities with arguments", bokat.CodeValidationFailed, 400)

				found := anon.call("search_booking_options", faucetSearch()).success(t, "search")
				if found["booking_created"] != false || found["availability_checked"] != true {
					t.Errorf("search truth flags: %v", found)
				}
				options := found["options"].([]any)
				if len(options) < 2 {
					t.Fatalf("search found %d options", len(options))
				}
				anon.call("search_booking_options", with(faucetSearch(), func(b map[string]any) { b["vertical_id"] = "roofing" })).
					problem(t, "unsupported vertical", bokat.CodeUnsupportedVertical, 422)
				anon.call("search_booking_options", with(faucetSearch(), func(b map[string]any) { b["description"] = 7 })).
					problem(t, "invalid search", bokat.CodeValidationFailed, 400)

				o := options[0].(map[string]any)
				noConsent := confirmBody(o, key("c0"))
				noConsent["user_consent_confirmed"] = false
				s.call("confirm_booking", noConsent).problem(t, "confirm without consent", bokat.CodeConsentRequired, 400)
				tampered := confirmBody(o, key("c0"))
				tampered["booking_option_id"] = o["booking_option_id"].(string) + "x"
				s.call("confirm_booking", tampered).problem(t, "confirm a tampered option", bokat.CodeBookingOptionInvalid, 400)

				created := s.call("confirm_booking", confirmBody(o, key("c1"))).success(t, "confirm")
				b := created["booking"].(map[string]any)
				id := b["id"].(string)
				if created["booking_created"] != true || created["idempotent_replay"] != false || b["status"] != "confirmed" {
					t.Errorf("confirm: %v", created)
				}
				replay := s.call("confirm_booking", confirmBody(o, key("c1"))).success(t, "confirm replay")
				if replay["idempotent_replay"] != true || replay["booking"].(map[string]any)["id"] != id {
					t.Errorf("replay: %v", replay)
				}
				if n := e.count(t, `SELECT COUNT(*) FROM bookings WHERE id = $1`, id); n != 1 {
					t.Errorf("%d bookings after a replay, want 1", n)
				}
				reused := confirmBody(options[1].(map[string]any), key("c1"))
				s.call("confirm_booking", reused).problem(t, "key reused for another option", bokat.CodeIdempotencyKeyReused, 409)

				status := s.call("get_booking_status", map[string]any{"booking_id": id}).success(t, "status")
				if status["found"] != true || status["current_confirmation_active"] != true {
					t.Errorf("status: %v", status)
				}
				if st := intruder.call("get_booking_status", map[string]any{"booking_id": id}).success(t, "another partner's status"); st["found"] != false {
					t.Errorf("another partner sees the booking: %v", st)
				}
				intruder.call("cancel_booking", with(cancelBody(key("x1")), func(m map[string]any) { m["booking_id"] = id })).
					problem(t, "another partner cancels", bokat.CodeBookingNotFound, 404)
				s.call("get_booking_status", map[string]any{}).problem(t, "status without an id", bokat.CodeValidationFailed, 400)

				next := e.nextOption(t, optionProvider(o))
				moved := s.call("reschedule_booking", with(rescheduleBody(next, key("r1")), func(m map[string]any) { m["booking_id"] = id })).
					success(t, "reschedule")
				if moved["booking_created"] != true || moved["booking"].(map[string]any)["slot_start_at"] != optionStart(next) {
					t.Errorf("reschedule: %v", moved)
				}
				s.call("reschedule_booking", with(rescheduleBody(next, key("r2")), func(m map[string]any) {
					m["booking_id"] = id
					m["user_confirmation_confirmed"] = false
				})).problem(t, "reschedule without confirmation", bokat.CodeConsentRequired, 400)

				cancelArgs := with(cancelBody(key("x2")), func(m map[string]any) { m["booking_id"] = id })
				cancelled := s.call("cancel_booking", cancelArgs).success(t, "cancel")
				if cancelled["status"] != "cancelled" || cancelled["current_confirmation_active"] != false {
					t.Errorf("cancel: %v", cancelled)
				}
				if again := s.call("cancel_booking", cancelArgs).success(t, "cancel replay"); again["idempotent_replay"] != true {
					t.Errorf("cancel replay: %v", again)
				}
				s.call("cancel_booking", with(cancelBody(key("x3")), func(m map[string]any) { m["booking_id"] = id })).
					problem(t, "cancel a cancelled booking", bokat.CodeBookingNotActive, 409)

				req := validRequestBody()
				req["idempotency_key"] = key("q1")
				made := s.call("create_follow_up_request", req).success(t, "follow-up request")
				if made["booking_created"] != false || made["request"] == nil {
					t.Errorf("follow-up request: %v", made)
				}
				if again := s.call("create_follow_up_request", req).success(t, "follow-up replay"); again["request"].(map[string]any)["id"] != made["request"].(map[string]any)["id"] {
					t.Errorf("follow-up replay made another request: %v", again)
				}
				noConsentReq := validRequestBody()
				noConsentReq["user_consent_confirmed"] = false
				s.call("create_follow_up_request", noConsentReq).problem(t, "follow-up without consent", bokat.CodeConsentRequired, 400)
			})
		}
		logs := e.logs.String()
		for _, pii := range testCustomerPII {
			if strings.Contains(logs, pii) {
				t.Errorf("the logs carry customer data %q", pii)
			}
		}
		if !strings.Contains(logs, `"route":"/mcp"`) || strings.Contains(logs, "server connecting") {
			t.Error("the access log lacks the /mcp requests, or the SDK's per-request lines reach the log")
		}
	})
}

// TestMCPErrorsCarryTheRESTProblem: an expired option answers the same
// Problem as REST, option_refresh_required and truth flags included.
func TestMCPErrorsCarryTheRESTProblem(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	o := e.options(t, faucetSearch())[0]
	expired := map[string]any{}
	for k, v := range o {
		expired[k] = v
	}
	expired["booking_option_id"] = resign(t, o, func(c *booking.OptionClaims) {
		c.IssuedAt, c.ExpiresAt = time.Now().Add(-20*time.Minute), time.Now().Add(-5*time.Minute)
	})
	rest := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(expired, "e1"), Header: bearer(e.token)})
	if rest.Status != 409 {
		t.Fatalf("REST: %d %s", rest.Status, rest.Body)
	}
	for _, version := range mcpEras {
		s := e.mcpConnect(t, version, e.token)
		got := s.call("confirm_booking", confirmBody(expired, "e2-"+version)).problem(t, "expired option", bokat.CodeBookingOptionExpired, 409)
		for _, field := range []string{"option_refresh_required", "booking_created", "safe_next_step", "detail", "title", "type"} {
			if _, ok := rest.JSON[field]; !ok {
				continue
			}
			if !jsonEqual(t, mustJSON(t, got[field]), mustJSON(t, rest.JSON[field])) {
				t.Errorf("%s: %s = %v, REST says %v", version, field, got[field], rest.JSON[field])
			}
		}
		if got["option_refresh_required"] != true {
			t.Errorf("%s: option_refresh_required %v", version, got["option_refresh_required"])
		}
	}
}

// mcpPost sends one raw JSON-RPC message to /mcp.
func (e *testEnv) mcpPost(t testing.TB, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	r, err := http.NewRequest("POST", e.http.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

func TestMCPAuthorization(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	readOnly := e.partner("reader", bokat.ScopeBookingsRead)
	const metadata = `resource_metadata="http://bokat.test/.well-known/oauth-protected-resource/mcp"`
	for _, version := range mcpEras {
		t.Run(version, func(t *testing.T) {
			// Without a credential: initialize, tools/list, capabilities and search work.
			anon := e.mcpConnect(t, version, "")
			anon.call("search_booking_options", faucetSearch()).success(t, "anonymous search")
			o := e.options(t, faucetSearch())[0]

			calls := []struct {
				tool  string
				args  map[string]any
				scope bokat.Scope
			}{
				{"confirm_booking", confirmBody(o, "a1"), bokat.ScopeBookingsConfirm},
				{"cancel_booking", with(cancelBody("a2"), func(m map[string]any) { m["booking_id"] = "bk_x" }), bokat.ScopeBookingsCancel},
				{"reschedule_booking", with(rescheduleBody(o, "a3"), func(m map[string]any) { m["booking_id"] = "bk_x" }), bokat.ScopeBookingsReschedule},
				{"create_follow_up_request", validRequestBody(), bokat.ScopeRequestsCreate},
				{"get_booking_status", map[string]any{"booking_id": "bk_x"}, bokat.ScopeBookingsRead},
			}
			for _, c := range calls {
				// A refused call ends the client's session: each gets its own.
				anon := e.mcpConnect(t, version, "")
				_, err := anon.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
				last := anon.transport.lastResponse()
				if err == nil || last.StatusCode != 401 {
					t.Errorf("%s without a credential: err %v, status %d, want 401", c.tool, err, last.StatusCode)
					continue
				}
				if got, want := last.Header.Get("WWW-Authenticate"), fmt.Sprintf(`Bearer scope=%q, %s`, c.scope, metadata); got != want {
					t.Errorf("%s challenge %q, want %q", c.tool, got, want)
				}
			}

			reader := e.mcpConnect(t, version, readOnly)
			reader.call("get_booking_status", map[string]any{"booking_id": "bk_nothing"}).success(t, "status with the read scope")
			_, err := reader.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "cancel_booking",
				Arguments: with(cancelBody("a4"), func(m map[string]any) { m["booking_id"] = "bk_x" })})
			last := reader.transport.lastResponse()
			if err == nil || last.StatusCode != 403 {
				t.Fatalf("cancel with the read scope only: err %v, status %d, want 403", err, last.StatusCode)
			}
			if got, want := last.Header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="service.bookings.cancel", `+metadata; got != want {
				t.Errorf("challenge %q, want %q", got, want)
			}
		})
	}

	// A credential that is sent must be valid, even where none is needed.
	resp, _ := e.mcpPost(t, map[string]string{"Authorization": "Bearer bkp_not-a-token", "MCP-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("invalid credential: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// A batch cannot smuggle a call past the check.
	resp, raw := e.mcpPost(t, nil, `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},`+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_booking_status","arguments":{"booking_id":"bk_x"}}}]`)
	if resp.StatusCode != 401 {
		t.Errorf("batch with a protected call: %d %s", resp.StatusCode, raw)
	}
}

func TestMCPResourceMetadata(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	r := e.do(request{Method: "GET", Path: "/.well-known/oauth-protected-resource/mcp", NoValidate: true})
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if r.JSON["resource"] != "http://bokat.test/mcp" || fmt.Sprint(r.JSON["authorization_servers"]) != "[http://bokat.test]" {
		t.Errorf("metadata: %s", r.Body)
	}
	scopes := fmt.Sprint(r.JSON["scopes_supported"])
	for _, sc := range []bokat.Scope{bokat.ScopeBookingsConfirm, bokat.ScopeBookingsCancel, bokat.ScopeBookingsReschedule, bokat.ScopeBookingsRead, bokat.ScopeRequestsCreate} {
		if !strings.Contains(scopes, string(sc)) {
			t.Errorf("scopes_supported %s lacks %s", scopes, sc)
		}
	}
}

// meta2026 is the per-request metadata a 2026-era request carries.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}`

func TestMCPTransportRefusals(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	cases := []struct {
		name   string
		header map[string]string
		body   string
		status int
		// rpcCode, when set, is the JSON-RPC error code of the body.
		rpcCode int
	}{
		{"same origin", map[string]string{"Origin": e.http.URL, "MCP-Protocol-Version": "2025-11-25"}, list, 200, 0},
		{"no origin", map[string]string{"MCP-Protocol-Version": "2025-06-18"}, list, 200, 0},
		{"foreign origin", map[string]string{"Origin": "https://evil.example", "MCP-Protocol-Version": "2025-11-25"}, list, 403, 0},
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site", "MCP-Protocol-Version": "2025-11-25"}, list, 403, 0},
		{"unsupported version", map[string]string{"MCP-Protocol-Version": "2024-11-05"}, list, 400, 0},
		{"future version", map[string]string{"MCP-Protocol-Version": "2027-01-01", "Mcp-Method": "tools/list"},
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + strings.ReplaceAll(meta2026, "2026-07-28", "2027-01-01") + `}}`,
			400, sdk.CodeUnsupportedProtocolVersion},
		{"body over the REST limit", map[string]string{"MCP-Protocol-Version": "2025-11-25"},
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("a", maxBodyBytes) + `"}}`, 413, 0},
		{"unknown method, 2025", map[string]string{"MCP-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","id":1,"method":"bookings/steal"}`, 400, 0},
		{"unknown method, 2026", map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "bookings/steal"},
			`{"jsonrpc":"2.0","id":1,"method":"bookings/steal","params":{` + meta2026 + `}}`, 404, -32601},
		{"header and body disagree", map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_capabilities"},
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_booking_options","arguments":{},` +
				meta2026 + `}}`, 400, sdk.CodeHeaderMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, raw := e.mcpPost(t, c.header, c.body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, raw)
			}
			if c.rpcCode != 0 {
				var msg struct {
					Error *struct{ Code int } `json:"error"`
				}
				if err := json.Unmarshal(raw, &msg); err != nil || msg.Error == nil || msg.Error.Code != c.rpcCode {
					t.Errorf("body %s, want JSON-RPC error %d", raw, c.rpcCode)
				}
			}
		})
	}
	// DNS rebinding: on this loopback listener only loopback hosts and the
	// base URL's host are served.
	for host, want := range map[string]int{"evil.example": 403, "evil.example:80": 403, "bokat.test": 200, "localhost:1": 200, "[::1]:8080": 200} {
		r, err := http.NewRequest("POST", e.http.URL+"/mcp", strings.NewReader(list))
		if err != nil {
			t.Fatal(err)
		}
		r.Host = host
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
	for _, method := range []string{"GET", "DELETE"} {
		r := e.do(request{Method: method, Path: "/mcp", NoValidate: true})
		if r.Status != 405 || r.Header.Get("Allow") != "POST" {
			t.Errorf("%s /mcp: %d Allow %q", method, r.Status, r.Header.Get("Allow"))
		}
	}
}

// TestMCPRateLimits: tool calls spend the REST classes' quotas (search,
// writes, reads), shared with the REST routes; initialize and tools/list
// spend none of them (they spend the control quota, off here: see
// TestMCPControlMessagesSpendTheControlQuota).
func TestMCPRateLimits(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	e := sqliteEnv(t, withLimits(ratelimit.NewMemory(ratelimit.MemoryOptions{Now: clk.Now}), smallLimits(2, 1, 3))).withDemoSupply()
	anon := e.mcpConnect(t, mcpEras[0], "")
	for i := 0; i < 2; i++ {
		anon.call("search_booking_options", faucetSearch()).success(t, "search within the quota")
	}
	anon.call("search_booking_options", faucetSearch()).problem(t, "search past the quota", bokat.CodeRateLimited, 429)
	if r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: faucetSearch()}); r.Status != 429 {
		t.Errorf("REST search after the MCP searches spent the quota: %d", r.Status)
	}
	s := e.mcpConnect(t, mcpEras[1], e.token)
	for i := 0; i < 3; i++ {
		s.call("get_booking_status", map[string]any{"booking_id": "bk_nothing"}).success(t, "status within the quota")
	}
	s.call("get_booking_status", map[string]any{"booking_id": "bk_nothing"}).problem(t, "status past the quota", bokat.CodeRateLimited, 429)
	cancel := with(cancelBody("rl1"), func(m map[string]any) { m["booking_id"] = "bk_nothing" })
	s.call("cancel_booking", cancel).problem(t, "cancel within the quota", bokat.CodeBookingNotFound, 404)
	s.call("cancel_booking", cancel).problem(t, "cancel past the quota", bokat.CodeRateLimited, 429)
}

// TestMCPDevelopmentServerAdmitsCallersWithoutCredential: with
// AuthOptional (development only) the tools act as the development
// principal, as the REST routes do.
func TestMCPDevelopmentServerAdmitsCallersWithoutCredential(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t, func(c *envConfig) { c.AuthOptional = true }).withDemoSupply()
	s := e.mcpConnect(t, mcpEras[2], "")
	o := e.options(t, faucetSearch())[0]
	created := s.call("confirm_booking", confirmBody(o, "dev1")).success(t, "confirm without a credential")
	id := created["booking"].(map[string]any)["id"]
	if st := s.call("get_booking_status", map[string]any{"booking_id": id}).success(t, "status"); st["found"] != true {
		t.Errorf("status: %v", st)
	}
}

// TestMCPBookingsBelongToTheOAuthUser: OAuth access tokens for /mcp work
// there, and a booking belongs to the signed-in user who made it, whichever
// surface the user's client reads it through.
func TestMCPBookingsBelongToTheOAuthUser(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t, withAccessTokens(oauthPrincipals{})).withDemoSupply()
	anna := e.mcpConnect(t, mcpEras[0], "bka_mcp.anna")
	bo := e.mcpConnect(t, mcpEras[1], "bka_mcp.bo")
	o := e.options(t, faucetSearch())[0]
	id := anna.call("confirm_booking", confirmBody(o, "o1")).success(t, "confirm")["booking"].(map[string]any)["id"]
	if st := anna.call("get_booking_status", map[string]any{"booking_id": id}).success(t, "owner's status"); st["found"] != true {
		t.Errorf("the owner does not find the booking: %v", st)
	}
	if st := bo.call("get_booking_status", map[string]any{"booking_id": id}).success(t, "another user's status"); st["found"] != false {
		t.Errorf("another user of the same client finds the booking: %v", st)
	}
	bo.call("reschedule_booking", with(rescheduleBody(e.nextOption(t, optionProvider(o)), "o2"), func(m map[string]any) { m["booking_id"] = id })).
		problem(t, "another user reschedules", bokat.CodeBookingNotFound, 404)
	// REST sees the booking the MCP call made, under the same owner.
	if r := e.do(request{Method: "GET", Path: fmt.Sprintf("/v1/bookings/%s", id), Header: bearer("bka_anna")}); r.JSON["found"] != true {
		t.Errorf("REST status for the owner: %s", r.Body)
	}
}
