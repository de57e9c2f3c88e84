package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"bokat"
	"bokat/internal/mcp"
)

// Consent through MCP form elicitation (2026-07-28, multi round-trip).

// elicitingClient connects at 2026-07-28 with an elicitation handler that
// answers action (and accept true on "accept"), recording the messages.
func (e *testEnv) elicitingClient(t *testing.T, version, action string) (*sdk.ClientSession, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var messages []string
	client := sdk.NewClient(&sdk.Implementation{Name: "bokat-test", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			mu.Lock()
			messages = append(messages, req.Params.Message)
			mu.Unlock()
			if action == "accept" {
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"accept": true}}, nil
			}
			return &sdk.ElicitResult{Action: action}, nil
		},
	})
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.http.URL + "/mcp",
		HTTPClient: &http.Client{Transport: &recordingTransport{token: e.token}}}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs, &messages
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args any) (bool, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	content, _ := res.StructuredContent.(map[string]any)
	return res.IsError, content
}

func (e *testEnv) consentMethods(t *testing.T, id string) (string, string) {
	t.Helper()
	var m, c string
	if err := e.db.R().QueryRowContext(context.Background(),
		`SELECT consent_method, change_consent_method FROM bookings WHERE id = $1`, id).Scan(&m, &c); err != nil {
		t.Fatal(err)
	}
	return m, c
}

func TestMCPElicitationAcceptAndDecline(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e = e.withDemoSupply()
		key := func(s string) string { return "eli-" + s + "-0001" }
		options := e.options(t, faucetSearch())

		decline, declined := e.elicitingClient(t, "2026-07-28", "decline")
		isErr, got := callTool(t, decline, "confirm_booking", confirmBody(options[0], key("d")))
		if !isErr || got["code"] != string(bokat.CodeConsentRequired) || len(*declined) != 1 {
			t.Fatalf("declined confirm: isError %v %v, %d forms", isErr, got, len(*declined))
		}
		if n := e.count(t, `SELECT COUNT(*) FROM bookings`); n != 0 {
			t.Fatalf("%d bookings after a declined form", n)
		}
		cancelled, _ := e.elicitingClient(t, "2026-07-28", "cancel")
		if isErr, got := callTool(t, cancelled, "confirm_booking", confirmBody(options[0], key("d2"))); !isErr ||
			got["code"] != string(bokat.CodeConsentRequired) {
			t.Fatalf("cancelled form: %v %v", isErr, got)
		}

		accept, forms := e.elicitingClient(t, "2026-07-28", "accept")
		isErr, got = callTool(t, accept, "confirm_booking", confirmBody(options[0], key("a")))
		if isErr || got["booking_created"] != true {
			t.Fatalf("accepted confirm: %v %v", isErr, got)
		}
		b := got["booking"].(map[string]any)
		id := b["id"].(string)
		if len(*forms) != 1 {
			t.Fatalf("%d forms, want 1", len(*forms))
		}
		msg := (*forms)[0]
		for _, want := range []string{b["provider_name"].(string), b["slot_label"].(string), fmt.Sprintf("%v SEK", b["price_sek"]),
			optionTerms(options[0]), "Included:"} {
			if !strings.Contains(msg, want) {
				t.Errorf("form message %q lacks %q", msg, want)
			}
		}
		if m, _ := e.consentMethods(t, id); m != "elicitation" {
			t.Errorf("consent_method %q, want elicitation", m)
		}
		// A replay with the same key writes nothing: no form, same booking.
		isErr, got = callTool(t, accept, "confirm_booking", confirmBody(options[0], key("a")))
		if isErr || got["idempotent_replay"] != true || len(*forms) != 1 {
			t.Errorf("replay: %v %v, %d forms", isErr, got, len(*forms))
		}
		// A write whose checks fail gets its Problem, no form.
		bad := confirmBody(options[1], key("b"))
		bad["booking_terms_version"] = "fixed_price_terms_v0:nope"
		if isErr, got = callTool(t, accept, "confirm_booking", bad); !isErr || got["code"] != string(bokat.CodeTermsVersionMismatch) || len(*forms) != 1 {
			t.Errorf("failing checks: %v %v, %d forms", isErr, got, len(*forms))
		}

		next := e.nextOption(t, optionProvider(options[0]))
		args := rescheduleBody(next, key("r"))
		args["booking_id"] = id
		if isErr, got = callTool(t, decline, "reschedule_booking", args); !isErr || got["code"] != string(bokat.CodeConsentRequired) {
			t.Fatalf("declined reschedule: %v %v", isErr, got)
		}
		if isErr, got = callTool(t, accept, "reschedule_booking", args); isErr || got["booking"].(map[string]any)["slot_start_at"] != optionStart(next) {
			t.Fatalf("accepted reschedule: %v %v", isErr, got)
		}
		if _, c := e.consentMethods(t, id); c != "elicitation" {
			t.Errorf("change_consent_method after reschedule %q", c)
		}
		cancelArgs := cancelBody(key("x"))
		cancelArgs["booking_id"] = id
		if isErr, got = callTool(t, decline, "cancel_booking", cancelArgs); !isErr || got["code"] != string(bokat.CodeConsentRequired) {
			t.Fatalf("declined cancel: %v %v", isErr, got)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM bookings WHERE id = $1 AND status = 'confirmed'`, id); n != 1 {
			t.Fatalf("a declined cancel changed the booking")
		}
		if isErr, got = callTool(t, accept, "cancel_booking", cancelArgs); isErr || got["status"] != "cancelled" {
			t.Fatalf("accepted cancel: %v %v", isErr, got)
		}
		if len(*forms) != 3 || !strings.Contains((*forms)[2], "Cancel") {
			t.Errorf("forms %q", *forms)
		}
	})
}

// Clients that do not declare elicitation, and every 2025-era client (a
// stateless server cannot ask them), keep the caller-declared fields.
func TestMCPWithoutElicitationKeepsCallerDeclared(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e = e.withDemoSupply()
		// Each confirmation books the first option of a fresh search: a
		// slot no earlier booking holds.
		fresh := func() map[string]any { return e.options(t, faucetSearch())[0] }
		for _, version := range mcpEras {
			plain := e.mcpConnect(t, version, e.token)
			got := plain.call("confirm_booking", confirmBody(fresh(), "plain-"+version)).success(t, version)
			if m, _ := e.consentMethods(t, got["booking"].(map[string]any)["id"].(string)); m != "caller_declared" {
				t.Errorf("%s without the capability: consent_method %q", version, m)
			}
			if version == "2026-07-28" {
				continue
			}
			eliciting, forms := e.elicitingClient(t, version, "decline")
			isErr, res := callTool(t, eliciting, "confirm_booking", confirmBody(fresh(), "eli25-"+version))
			if isErr || len(*forms) != 0 {
				t.Fatalf("%s with a handler: %v %v, %d forms", version, isErr, res, len(*forms))
			}
			if m, _ := e.consentMethods(t, res["booking"].(map[string]any)["id"].(string)); m != "caller_declared" {
				t.Errorf("%s with a handler: consent_method %q", version, m)
			}
		}
	})
}

// rawCall sends one 2026-era tools/call declaring form elicitation, with
// the state and answer when given, and returns the result.
func (e *testEnv) rawCall(t *testing.T, token, tool string, args map[string]any, state string, accept bool) map[string]any {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
	}}
	if state != "" {
		params["requestState"] = state
		action := map[string]any{"action": "decline"}
		if accept {
			action = map[string]any{"action": "accept", "content": map[string]any{"accept": true}}
		}
		params["inputResponses"] = map[string]any{"consent": action}
	}
	body := string(mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
	resp, raw := e.mcpPost(t, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool,
		"Authorization": "Bearer " + token}, body)
	var msg struct {
		Result map[string]any `json:"result"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(raw, &msg) != nil || msg.Result == nil {
		t.Fatalf("tools/call %s: %d %s", tool, resp.StatusCode, raw)
	}
	return msg.Result
}

// resignState returns state with its payload changed by edit and signed again
// with the server's key (as only the server could): what is then refused
// is refused for what the state says, not for its signature.
func resignState(t *testing.T, state string, edit func(map[string]any)) string {
	t.Helper()
	payload, _, _ := strings.Cut(state, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	_, key, err := testOptionKeys.DerivedKey("", mcp.ElicitationKeyLabel)
	if err != nil {
		t.Fatal(err)
	}
	p := base64.RawURLEncoding.EncodeToString(mustJSON(t, m))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(p))
	return p + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func TestMCPElicitationStateRefusals(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e = e.withDemoSupply()
		other := e.partner("other", bokat.AllScopes()...)
		o := e.options(t, faucetSearch())[0]
		args := confirmBody(o, "state-0001")

		first := e.rawCall(t, e.token, "confirm_booking", args, "", false)
		state, _ := first["requestState"].(string)
		if first["resultType"] != "input_required" || state == "" || first["inputRequests"] == nil {
			t.Fatalf("first call: %v", first)
		}
		refused := func(what, token string, args map[string]any, state, why string) {
			t.Helper()
			res := e.rawCall(t, token, "confirm_booking", args, state, true)
			sc, _ := res["structuredContent"].(map[string]any)
			if res["isError"] != true || sc["code"] != string(bokat.CodeConsentRequired) || !strings.Contains(sc["detail"].(string), why) {
				t.Errorf("%s: %v, want consent_required (%s)", what, res, why)
			}
			if n := e.count(t, `SELECT COUNT(*) FROM bookings`); n != 0 {
				t.Fatalf("%s: %d bookings", what, n)
			}
		}
		payload, sig, _ := strings.Cut(state, ".")
		mac, err := base64.RawURLEncoding.DecodeString(sig)
		if err != nil {
			t.Fatal(err)
		}
		mac[3] ^= 1
		refused("tampered signature", e.token, args, payload+"."+base64.RawURLEncoding.EncodeToString(mac), "signature")
		forged, _, _ := strings.Cut(resignState(t, state, func(m map[string]any) { m["e"] = time.Now().Add(time.Hour).UnixMilli() }), ".")
		refused("tampered payload", e.token, args, forged+"."+sig, "signature")
		refused("expired", e.token, args, resignState(t, state, func(m map[string]any) {
			m["e"] = time.Now().Add(-time.Second).UnixMilli()
		}), "expired")
		refused("other principal", other, args, state, "another caller")
		changed := confirmBody(o, "state-0001")
		changed["user_consent_statement"] = "Något annat."
		refused("other arguments", e.token, changed, state, "another call")
		refused("other tool state", e.token, args, resignState(t, state, func(m map[string]any) { m["t"] = "reschedule_booking" }), "another call")

		// Declining with a good state books nothing.
		res := e.rawCall(t, e.token, "confirm_booking", args, state, false)
		if res["isError"] != true {
			t.Fatalf("decline: %v", res)
		}
		res = e.rawCall(t, e.token, "confirm_booking", args, state, true)
		if sc, _ := res["structuredContent"].(map[string]any); res["isError"] == true || sc["booking_created"] != true {
			t.Fatalf("accept: %v", res)
		}
		// The same state again, under a new key so the write is not a
		// replay: refused as used, nothing booked.
		again := confirmBody(e.options(t, faucetSearch())[0], "state-0002")
		st2 := e.rawCall(t, e.token, "confirm_booking", again, "", false)["requestState"].(string)
		reused := resignState(t, st2, func(m map[string]any) {
			var p map[string]any
			raw, _ := base64.RawURLEncoding.DecodeString(payload)
			_ = json.Unmarshal(raw, &p)
			m["n"] = p["n"]
		})
		res = e.rawCall(t, e.token, "confirm_booking", again, reused, true)
		if sc, _ := res["structuredContent"].(map[string]any); res["isError"] != true || sc["code"] != string(bokat.CodeConsentRequired) ||
			!strings.Contains(sc["detail"].(string), "already used") {
			t.Errorf("reused nonce: %v", res)
		}
		if n := e.count(t, `SELECT COUNT(*) FROM bookings`); n != 1 {
			t.Errorf("%d bookings, want 1", n)
		}
	})
}
