package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
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

// TestSelfRegisteredClientsCannotPassForBokat: a client_name that reads
// as Bokat — in any case, spacing or look-alike letters, or with invisible
// characters between — is refused by RFC 7591 registration; invisible
// characters are dropped from any other name.
func TestSelfRegisteredClientsCannotPassForBokat(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	for _, name := range []string{"Bokat", "BOKAT Support", "B\u200bokat", "Bo\u2066kat\u2069", "Bоkаt", "Ｂｏｋａｔ", "B.o.k.a.t"} {
		status, body, _ := e.register("", `{"redirect_uris":["https://evil.example/cb"],"client_name":"`+name+`"}`)
		if status != http.StatusBadRequest || body["error"] != "invalid_client_metadata" {
			t.Errorf("client_name %q: %d %v, want 400 invalid_client_metadata", name, status, body)
		}
	}
	status, body, _ := e.register("", `{"redirect_uris":["https://app.example/cb"],"client_name":"Hemhj\u00e4lpen\u202e IA\u200b"}`)
	if status != http.StatusCreated || body["client_name"] != "Hemhjälpen IA" {
		t.Errorf("name with a bidi override: %d %v, want 201 with client_name \"Hemhjälpen IA\"", status, body)
	}
}

// TestEveryPageWarnsAboutSelfRegisteredClients: a self-declared name is not
// checked by anyone, so the sign-in page (the first the customer sees), the
// code page and the consent page each say so and name the host the
// customer is sent on to in its ASCII form; a name claiming a well-known
// assistant is marked. An operator-registered client gets no warning.
func TestEveryPageWarnsAboutSelfRegisteredClients(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	// The host's second letter is a Cyrillic а.
	const redirect = "https://ch\u0430tgpt.example/cb"
	status, body, _ := e.register("", `{"redirect_uris":["`+redirect+`"],"client_name":"ChatGPT"}`)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, body)
	}
	dynamic := &oauth2.Config{ClientID: body["client_id"].(string), RedirectURL: "https://chаtgpt.example/cb",
		Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + "/oauth/authorize"}}
	authURL := dynamic.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()), oauth2.SetAuthURLParam("lang", "en"))
	const (
		host      = "xn--chtgpt-4nf.example"
		warning   = "This app registered itself: Bokat has not checked its name or who runs it. When you are done, you are sent on to " + host + "."
		assistant = "Its name is that of a well-known assistant (ChatGPT), but Bokat cannot confirm that this app is it. Continue only if " + host + " is that assistant&#39;s own address."
	)
	b := e.browser()
	resp, page := b.get(authURL)
	resp, page = b.get(expectRedirect(t, resp, page))
	pages := map[string]string{"sign-in": page}
	form := formOf(t, page, "/oauth/sign-in")
	form.Set("email", "kund@example.se")
	resp, page = b.post("/oauth/sign-in", form, nil)
	_, pages["code"] = b.get(expectRedirect(t, resp, page))
	pages["consent"] = e.signIn(e.browser(), authURL, "kund@example.se")
	for name, page := range pages {
		// What the page shows: its text without the tags (hidden fields
		// and links carry the request's redirect_uri as sent).
		shown := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page, "")
		if !strings.Contains(shown, warning) || !strings.Contains(shown, assistant) || strings.Contains(shown, "chаtgpt") {
			t.Errorf("%s page of a self-registered client lacks the warning or shows the Unicode host:\n%s", name, page)
		}
	}
	if !strings.Contains(pages["sign-in"], "An app that calls itself “ChatGPT” wants to use Bokat on your behalf.") {
		t.Errorf("the sign-in page presents the self-declared name as a fact:\n%s", pages["sign-in"])
	}
	registered := e.newClient("Assistenten", true)
	operatorURL := registered.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()), oauth2.SetAuthURLParam("lang", "en"))
	b = e.browser()
	resp, page = b.get(operatorURL)
	_, signIn := b.get(expectRedirect(t, resp, page))
	for name, page := range map[string]string{"sign-in": signIn, "consent": e.signIn(e.browser(), operatorURL, "kund@example.se")} {
		if strings.Contains(page, "registered itself") || !strings.Contains(page, "Assistenten wants") {
			t.Errorf("%s page of an operator-registered client warns:\n%s", name, page)
		}
	}
}
