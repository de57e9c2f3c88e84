package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/oauth"
	"bokat/internal/ratelimit"
)

// register posts a registration request (RFC 7591) from the address ip.
func (e *oauthEnv) register(ip, body string) (int, map[string]any, http.Header) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.http.URL+"/oauth/register", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if ip != "" {
		req.Header.Set("X-Forwarded-For", ip)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatalf("register: body is not JSON: %s", raw)
	}
	return resp.StatusCode, out, resp.Header
}

// TestDynamicRegistration: RFC 7591 registration of public clients is
// lenient about the name and strict about redirect URIs, and answers in
// the RFC's shapes.
func TestDynamicRegistration(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	status, body, h := e.register("", `{"redirect_uris":["https://claude.ai/api/mcp/auth_callback"],
		"client_name":"Claude\u0007  (MCP)\n", "token_endpoint_auth_method":"none",
		"grant_types":["authorization_code","refresh_token"], "response_types":["code"], "logo_uri":"https://x.example/l.png"}`)
	if status != http.StatusCreated || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("register: %d %v %v", status, body, h)
	}
	id, _ := body["client_id"].(string)
	if !strings.HasPrefix(id, "oc_") || body["client_name"] != "Claude (MCP)" || body["token_endpoint_auth_method"] != "none" ||
		body["client_secret"] != nil || body["scope"] != "service.capabilities.read service.bookings.search service.bookings.confirm "+
		"service.bookings.read service.bookings.cancel service.bookings.reschedule service.requests.create" {
		t.Errorf("registration response %v", body)
	}
	c, err := e.db.OAuthClient(context.Background(), id)
	if err != nil || !c.Public() || c.Registration != oauth.ClientDynamic || c.Name != "Claude (MCP)" ||
		len(c.RedirectURIs) != 1 || slices.Contains(c.Scopes, bokat.ScopeWebhooksManage) {
		t.Errorf("stored client %+v, %v", c, err)
	}

	// A client asking to be confidential is registered as a public one, and
	// told so: it gets no secret and must use PKCE alone.
	status, body, _ = e.register("", `{"redirect_uris":["https://chatgpt.com/connector_platform_oauth_redirect"],
		"client_name":"ChatGPT","token_endpoint_auth_method":"client_secret_post"}`)
	if status != http.StatusCreated || body["token_endpoint_auth_method"] != "none" || body["client_secret"] != nil {
		t.Errorf("confidential request: %d %v, want a public client", status, body)
	}

	// No name: the redirect URI's host names the client to the customer.
	status, body, _ = e.register("", `{"redirect_uris":["http://127.0.0.1:33418/callback"],"scope":"service.bookings.read"}`)
	if status != http.StatusCreated || body["client_name"] != "127.0.0.1" || body["scope"] != "service.bookings.read" {
		t.Errorf("nameless registration: %d %v", status, body)
	}

	for _, c := range []struct{ name, body, code string }{
		{"no redirect URI", `{"client_name":"A"}`, "invalid_redirect_uri"},
		{"http off loopback", `{"redirect_uris":["http://app.example/cb"]}`, "invalid_redirect_uri"},
		{"fragment", `{"redirect_uris":["https://app.example/cb#x"]}`, "invalid_redirect_uri"},
		{"custom scheme", `{"redirect_uris":["myapp:/cb"]}`, "invalid_redirect_uri"},
		{"implicit", `{"redirect_uris":["https://app.example/cb"],"grant_types":["implicit"]}`, "invalid_client_metadata"},
		{"token response", `{"redirect_uris":["https://app.example/cb"],"response_types":["token"]}`, "invalid_client_metadata"},
		{"unknown scope", `{"redirect_uris":["https://app.example/cb"],"scope":"admin"}`, "invalid_client_metadata"},
		{"webhook scope", `{"redirect_uris":["https://app.example/cb"],"scope":"service.webhooks.manage"}`, "invalid_client_metadata"},
		{"not JSON", `redirect_uris=https://app.example/cb`, "invalid_client_metadata"},
		{"control character in a URI", `{"redirect_uris":["https://app.example/c\u0000b"]}`, "invalid_client_metadata"},
	} {
		status, body, _ := e.register("", c.body)
		if status != http.StatusBadRequest || body["error"] != c.code || body["error_description"] == "" {
			t.Errorf("%s: %d %v, want 400 %s", c.name, status, body, c.code)
		}
	}
}

// TestDynamicRegistrationIsRateLimitedPerIP: the budget is per client IP;
// another address still registers.
func TestDynamicRegistrationIsRateLimitedPerIP(t *testing.T) {
	t.Parallel()
	limits := oauth.DefaultLimits()
	limits.Register = ratelimit.Policy{Name: "oauth-register", Quota: 2, Window: time.Hour}
	e := newLimitedOAuthEnv(t, ratelimit.NewMemory(ratelimit.MemoryOptions{Now: newTestClock().Now}), limits)
	const body = `{"redirect_uris":["https://app.example/cb"]}`
	for i := range 2 {
		if status, out, _ := e.register("203.0.113.7", body); status != http.StatusCreated {
			t.Fatalf("registration %d: %d %v", i, status, out)
		}
	}
	status, out, h := e.register("203.0.113.7", body)
	if status != http.StatusTooManyRequests || out["error"] != "slow_down" || h.Get("Retry-After") == "" {
		t.Errorf("third registration: %d %v %v, want 429 slow_down with Retry-After", status, out, h)
	}
	if status, out, _ := e.register("203.0.113.8", body); status != http.StatusCreated {
		t.Errorf("another address: %d %v", status, out)
	}
}

// TestAuthorizationServerMetadataAdvertisesRegistration: RFC 8414
// metadata names the registration endpoint, and Client ID Metadata
// Document support when a guard is configured.
func TestAuthorizationServerMetadataAdvertisesRegistration(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	as, _ := getJSON(t, e.http.URL+"/.well-known/oauth-authorization-server")
	if as["registration_endpoint"] != "http://bokat.test/oauth/register" || as["client_id_metadata_document_supported"] != false {
		t.Errorf("metadata without a guard: %v", as)
	}
}

// TestConsentWarnsAboutSelfRegisteredClients: a self-declared name is not
// checked by anyone, so the consent page says so and names the host the
// customer is sent on to; an operator-registered client gets no warning.
func TestConsentWarnsAboutSelfRegisteredClients(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	status, body, _ := e.register("", `{"redirect_uris":["https://evil.example/cb"],"client_name":"Bokat Support"}`)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, body)
	}
	dynamic := &oauth2.Config{ClientID: body["client_id"].(string), RedirectURL: "https://evil.example/cb",
		Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + "/oauth/authorize"}}
	const warning = "This app registered itself: Bokat has not checked its name. If you approve, you are sent on to evil.example."
	b := e.browser()
	page := e.signIn(b, dynamic.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()), oauth2.SetAuthURLParam("lang", "en")), "kund@example.se")
	if !strings.Contains(page, warning) || !strings.Contains(page, "Bokat Support") {
		t.Errorf("consent page of a self-registered client lacks the warning:\n%s", page)
	}
	registered := e.newClient("Assistenten", true)
	page = e.signIn(e.browser(), registered.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()), oauth2.SetAuthURLParam("lang", "en")), "kund@example.se")
	if strings.Contains(page, "registered itself") {
		t.Errorf("consent page of an operator-registered client warns:\n%s", page)
	}
}
