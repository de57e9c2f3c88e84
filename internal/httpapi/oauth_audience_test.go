package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

const mcpResource = "http://bokat.test/mcp"

// exchangeFor authorizes conf for the address with the resource parameter
// (RFC 8707) at both the authorization and the token request, and
// exchanges the code. An empty resource sends none.
func (e *oauthEnv) exchangeFor(conf *oauth2.Config, email, resource string) *oauth2.Token {
	e.t.Helper()
	verifier := oauth2.GenerateVerifier()
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	if resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", resource))
	}
	b := e.browser()
	loc := e.decide(b, e.signIn(b, conf.AuthCodeURL("st", opts...), email), "approve")
	code := loc.Query().Get("code")
	if code == "" {
		e.t.Fatalf("authorization response %v: want a code", loc)
	}
	opts = []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}
	if resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", resource))
	}
	tok, err := conf.Exchange(context.Background(), code, opts...)
	if err != nil {
		e.t.Fatalf("exchange: %v", err)
	}
	return tok
}

// mcpStatusCall is a tools/call of get_booking_status as one raw POST.
const mcpStatusCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_booking_status","arguments":{"booking_id":"bk_x"}}}`

// TestOAuthTokensAreBoundToTheirResource: a token minted for /mcp works
// on /mcp only, one minted for the REST API (or without a resource, as
// clients from before audiences ask) only there. The refused token gets
// each surface's 401 invalid_token with its challenge.
func TestOAuthTokensAreBoundToTheirResource(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newOAuthEnv(t, db, oauthSetup{})
		conf := e.newClient("Assistenten", true, bokat.ScopeBookingsRead)
		mcpHeader := func(tok string) map[string]string {
			return map[string]string{"Authorization": "Bearer " + tok, "MCP-Protocol-Version": "2025-11-25"}
		}
		forMCP := e.exchangeFor(conf, "kund@example.se", mcpResource)
		resp, raw := e.mcpPost(t, mcpHeader(forMCP.AccessToken), mcpStatusCall)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), `"found":false`) {
			t.Errorf("/mcp token on /mcp: %d %s", resp.StatusCode, raw)
		}
		checkInvalidToken(t, e.do(request{Method: "GET", Path: "/v1/bookings/bk_x", Header: bearer(forMCP.AccessToken)}), "/v1/bookings/bk_x")

		for _, resource := range []string{"", "http://bokat.test", "http://bokat.test/v1"} {
			forAPI := e.exchangeFor(conf, "kund@example.se", resource)
			if r := e.do(request{Method: "GET", Path: "/v1/bookings/bk_x", Header: bearer(forAPI.AccessToken)}); r.Status != http.StatusOK {
				t.Errorf("resource %q: REST token on REST: %d %s", resource, r.Status, r.Body)
			}
			resp, raw := e.mcpPost(t, mcpHeader(forAPI.AccessToken), mcpStatusCall)
			challenge := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) ||
				!strings.Contains(challenge, `resource_metadata="http://bokat.test/.well-known/oauth-protected-resource/mcp"`) {
				t.Errorf("resource %q: REST token on /mcp: %d %q %s", resource, resp.StatusCode, challenge, raw)
			}
		}

		// A refresh keeps the audience: it may repeat it or leave it out,
		// never change it; a refused change leaves the refresh token
		// usable.
		refresh := func(token, resource string) (int, map[string]any) {
			form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {conf.ClientID}}
			if resource != "" {
				form.Set("resource", resource)
			}
			status, body, _ := e.tokenRequest(form, "", "")
			return status, body
		}
		for _, resource := range []string{"http://bokat.test", "http://bokat.test/other"} {
			if status, body := refresh(forMCP.RefreshToken, resource); status != 400 || body["error"] != "invalid_target" {
				t.Errorf("refresh to %s: %d %v, want 400 invalid_target", resource, status, body)
			}
		}
		status, body := refresh(forMCP.RefreshToken, mcpResource)
		if status != 200 {
			t.Fatalf("refresh with the same resource: %d %v", status, body)
		}
		status, body = refresh(body["refresh_token"].(string), "")
		if status != 200 {
			t.Fatalf("refresh without a resource: %d %v", status, body)
		}
		access := body["access_token"].(string)
		if resp, raw := e.mcpPost(t, mcpHeader(access), mcpStatusCall); resp.StatusCode != http.StatusOK {
			t.Errorf("refreshed /mcp token on /mcp: %d %s", resp.StatusCode, raw)
		}
		checkInvalidToken(t, e.do(request{Method: "GET", Path: "/v1/bookings/bk_x", Header: bearer(access)}), "/v1/bookings/bk_x")
	})
}

// TestOAuthRefusesUnknownResources: RFC 8707 invalid_target at the
// authorization endpoint (sent back to the client) and at the token
// endpoint, where a code for one resource cannot be redeemed for another.
func TestOAuthRefusesUnknownResources(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Assistenten", true, bokat.ScopeBookingsRead)
	verifier := oauth2.GenerateVerifier()
	for name, opts := range map[string][]oauth2.AuthCodeOption{
		"unknown":  {oauth2.SetAuthURLParam("resource", "https://elsewhere.example/mcp")},
		"empty":    {oauth2.SetAuthURLParam("resource", "")},
		"trailing": {oauth2.SetAuthURLParam("resource", mcpResource+"/")},
	} {
		b := e.browser()
		resp, body := b.get(conf.AuthCodeURL("st", append(opts, oauth2.S256ChallengeOption(verifier))...))
		loc, err := url.Parse(expectRedirect(t, resp, body))
		if err != nil || loc.Query().Get("error") != "invalid_target" || loc.Query().Get("state") != "st" {
			t.Errorf("%s: redirected to %v (%v), want error=invalid_target with the state", name, loc, err)
		}
	}
	// Two resources: this server binds a grant to one.
	u := conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)) + "&resource=" + url.QueryEscape(mcpResource) +
		"&resource=" + url.QueryEscape("http://bokat.test")
	resp, body := e.browser().get(u)
	if loc, err := url.Parse(expectRedirect(t, resp, body)); err != nil || loc.Query().Get("error") != "invalid_target" {
		t.Errorf("two resources: redirected to %v (%v), want error=invalid_target", loc, err)
	}

	b := e.browser()
	loc := e.decide(b, e.signIn(b, conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("resource", mcpResource)), "kund@example.se"), "approve")
	status, tok, _ := e.tokenRequest(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"client_id": {conf.ClientID}, "code_verifier": {verifier}, "redirect_uri": {callbackURI},
		"resource": {"http://bokat.test/v1"}}, "", "")
	if status != 400 || tok["error"] != "invalid_target" {
		t.Errorf("code for /mcp redeemed for the REST API: %d %v, want 400 invalid_target", status, tok)
	}
}
