package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"bokat"
	"bokat/api"
)

// The real contract; the backend and the authenticator are never reached
// by these tests (the HTTP surface's tests run the tools end to end).
type unreachable struct{}

func (unreachable) Invoke(context.Context, Operation) Answer { panic("Invoke called") }

func (unreachable) Admit(http.ResponseWriter, *http.Request, int) bool { panic("Admit called") }

func (unreachable) ElicitationKey(string) (string, []byte, error) { panic("ElicitationKey called") }

func (unreachable) Problem(context.Context, error) (int, []byte) { panic("Problem called") }

func (unreachable) Authenticate(context.Context, *http.Request) (bokat.Principal, error) {
	panic("Authenticate called")
}

func newServer(t *testing.T) *Server {
	t.Helper()
	c, err := api.Load()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{BaseURL: "https://bokat.example/", Contract: c, Auth: unreachable{}, Backend: unreachable{}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestToolsFollowTheContract(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	want := map[string]struct {
		scope    bokat.Scope
		optional bool
		params   []string
	}{
		"get_capabilities":          {bokat.ScopeCapabilitiesRead, true, nil},
		"search_booking_options":    {bokat.ScopeBookingsSearch, true, nil},
		"confirm_booking":           {bokat.ScopeBookingsConfirm, false, nil},
		"get_booking_status":        {bokat.ScopeBookingsRead, false, []string{"booking_id"}},
		"cancel_booking":            {bokat.ScopeBookingsCancel, false, []string{"booking_id"}},
		"reschedule_booking":        {bokat.ScopeBookingsReschedule, false, []string{"booking_id"}},
		"search_reschedule_options": {bokat.ScopeBookingsReschedule, false, []string{"booking_id"}},
		"create_follow_up_request":  {bokat.ScopeRequestsCreate, false, nil},
	}
	if got := slices.Sorted(maps.Keys(s.tools)); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("tools %v", got)
	}
	for name, w := range want {
		tl := s.tools[name]
		if tl.scope != w.scope || tl.credentialOptional != w.optional || !slices.Equal(tl.pathParams, w.params) {
			t.Errorf("%s: scope %s optional %v params %v, want %s %v %v", name, tl.scope, tl.credentialOptional, tl.pathParams, w.scope, w.optional, w.params)
		}
	}
	out := asJSON(t, s.tools["confirm_booking"].def.OutputSchema)
	if alts, ok := out["anyOf"].([]any); !ok || len(alts) != 3 {
		t.Errorf("confirm_booking output is not any of the 200 and 201 bodies and the Problem: %v", out)
	}
	out = asJSON(t, s.tools["get_booking_status"].def.OutputSchema)
	if alts, ok := out["anyOf"].([]any); !ok || len(alts) != 2 {
		t.Errorf("get_booking_status output is not any of the 200 body and the Problem: %v", out)
	}
}

// asJSON returns v as decoded JSON.
func asJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSplitArguments(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		args       string
		params     []string
		wantBody   string
		wantValues map[string]string
	}{
		{"no arguments", ``, nil, `{}`, nil},
		{"null", `null`, []string{"booking_id"}, `{}`, map[string]string{}},
		{"body only", `{"a":1}`, nil, `{"a":1}`, nil},
		{"path and body", `{"booking_id":"bk_1","reason":"x"}`, []string{"booking_id"}, `{"reason":"x"}`, map[string]string{"booking_id": "bk_1"}},
		{"id not a string stays in the body", `{"booking_id":7}`, []string{"booking_id"}, `{"booking_id":7}`, map[string]string{}},
		{"not an object", `[1]`, []string{"booking_id"}, `[1]`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, values, err := splitArguments(json.RawMessage(c.args), c.params)
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != c.wantBody || !maps.Equal(values, c.wantValues) {
				t.Errorf("got %s %v, want %s %v", body, values, c.wantBody, c.wantValues)
			}
		})
	}
}

func TestScopesNeeded(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	cases := []struct {
		name, body string
		want       []string
		others     int
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil, 1},
		{"list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 1},
		{"search", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_booking_options"}}`, nil, 0},
		{"confirm", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm_booking"}}`, []string{"service.bookings.confirm"}, 0},
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steal"}}`, nil, 0},
		{"batch", `[{"method":"tools/call","params":{"name":"cancel_booking"}},{"method":"tools/call","params":{"name":"get_booking_status"}},` +
			`{"method":"tools/call","params":{"name":"cancel_booking"}}]`, []string{"service.bookings.cancel", "service.bookings.read"}, 0},
		{"mixed batch", `[{"method":"ping","id":1},{"method":"tools/call","params":{"name":"get_booking_status"}},` +
			`{"method":"notifications/initialized"},{"method":"tools/list","id":2}]`, []string{"service.bookings.read"}, 3},
		{"not JSON", `{`, nil, 1},
	}
	for _, c := range cases {
		if got, others := s.inspect([]byte(c.body)); !slices.Equal(got, c.want) || others != c.others {
			t.Errorf("%s: %v and %d others, want %v and %d", c.name, got, others, c.want, c.others)
		}
	}
}

// missingOperation is a contract without the operations the tools need.
type missingOperation struct{}

func (missingOperation) OperationSchemas(method, path string) (api.OperationSchemas, error) {
	return api.OperationSchemas{}, api.ErrNoOperation
}

func TestNewRefusesAContractWithoutTheOperations(t *testing.T) {
	t.Parallel()
	_, err := New(Config{BaseURL: "https://bokat.example", Contract: missingOperation{}, Auth: unreachable{}, Backend: unreachable{}})
	if !errors.Is(err, api.ErrNoOperation) {
		t.Fatalf("New with an empty contract: %v", err)
	}
}

// TestToolsAreDerivedOncePerContract: the tools' schemas are derived from
// the contract once, and every server built on it serves the same ones.
func TestToolsAreDerivedOncePerContract(t *testing.T) {
	t.Parallel()
	a, b := newServer(t), newServer(t)
	for name, ta := range a.tools {
		if tb := b.tools[name]; tb.def != ta.def {
			t.Errorf("%s: two servers on one contract derived it twice", name)
		}
	}
	// A contract the tools cannot be derived from keeps failing.
	for range 2 {
		if _, err := New(Config{BaseURL: "https://bokat.example", Contract: missingOperation{}, Auth: unreachable{},
			Backend: unreachable{}}); !errors.Is(err, api.ErrNoOperation) {
			t.Fatalf("New with an empty contract: %v", err)
		}
	}
}

// TestToolsTheSDKRefusesFailNew: the SDK panics on a tool it refuses when
// a server adds it, on its first MCP request: the tools are checked with it
// when they are derived, so that New fails instead.
func TestToolsTheSDKRefusesFailNew(t *testing.T) {
	t.Parallel()
	bad := tool{def: &sdk.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"string"}`)}}
	if err := checkWithSDK([]tool{bad}); err == nil || !strings.Contains(err.Error(), "tool bad") {
		t.Fatalf("checkWithSDK(a tool whose input is not an object) = %v, want an error naming it", err)
	}
	c, err := api.Load()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := buildTools(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkWithSDK(tools); err != nil {
		t.Errorf("the contract's tools: %v", err)
	}
}
