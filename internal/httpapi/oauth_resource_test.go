package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"bokat"
)

func getJSON(t *testing.T, u string) (map[string]any, http.Header) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, raw)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v, resp.Header
}

func stringsOf(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestDiscoveryDocuments pins RFC 8414 and RFC 9728 metadata and the link
// to it in every 401.
func TestDiscoveryDocuments(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	var scopes []string
	for _, s := range bokat.AllScopes() {
		scopes = append(scopes, string(s))
	}

	as, _ := getJSON(t, e.http.URL+"/.well-known/oauth-authorization-server")
	for k, want := range map[string]string{
		"issuer": "http://bokat.test", "authorization_endpoint": "http://bokat.test/oauth/authorize",
		"token_endpoint": "http://bokat.test/oauth/token", "revocation_endpoint": "http://bokat.test/oauth/revoke",
	} {
		if as[k] != want {
			t.Errorf("%s = %v, want %s", k, as[k], want)
		}
	}
	for k, want := range map[string][]string{
		"scopes_supported":                      scopes,
		"code_challenge_methods_supported":      {"S256"},
		"grant_types_supported":                 {"authorization_code", "refresh_token"},
		"response_types_supported":              {"code"},
		"token_endpoint_auth_methods_supported": {"client_secret_basic", "client_secret_post", "none"},
	} {
		if got := stringsOf(as[k]); !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if _, ok := as["api_request_id"]; ok {
		t.Error("RFC 8414 metadata carries v1 metadata")
	}

	pr, _ := getJSON(t, e.http.URL+"/.well-known/oauth-protected-resource")
	if pr["resource"] != "http://bokat.test" || !slices.Equal(stringsOf(pr["authorization_servers"]), []string{"http://bokat.test"}) ||
		!slices.Equal(stringsOf(pr["bearer_methods_supported"]), []string{"header"}) || !slices.Equal(stringsOf(pr["scopes_supported"]), scopes) {
		t.Errorf("protected resource metadata = %v", pr)
	}
	if _, ok := pr["api_request_id"]; ok {
		t.Error("RFC 9728 metadata carries v1 metadata")
	}

	// A 401 names the document; RFC 6750 3.1: no error code without a credential.
	r := e.do(request{Method: "GET", Path: "/v1/bookings/b1"})
	checkProblem(t, r, http.StatusUnauthorized, bokat.CodeUnauthorized, "/v1/bookings/b1")
	h := r.Header.Get("WWW-Authenticate")
	m := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(h)
	if m == nil || m[1] != "http://bokat.test/.well-known/oauth-protected-resource" || strings.Contains(h, "error=") {
		t.Errorf("WWW-Authenticate without a credential = %q", h)
	}
	r = e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: bearer("bka_unknown")})
	checkInvalidToken(t, r, "/v1/bookings/b1")
}

// TestOAuthTokensMeetScopes: a 403 for a real OAuth token names the needed
// scope in WWW-Authenticate (RFC 6750 3.1).
func TestOAuthTokensMeetScopes(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Katalogläsaren", false, bokat.ScopeCapabilitiesRead)
	tok := e.exchange(conf, "scope@example.se")
	r := e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: bearer(tok.AccessToken)})
	checkProblem(t, r, http.StatusForbidden, bokat.CodeInsufficientScope, "/v1/bookings/b1")
	h := r.Header.Get("WWW-Authenticate")
	if !strings.Contains(h, `error="insufficient_scope"`) || !strings.Contains(h, `scope="service.bookings.read"`) || !strings.Contains(h, wantResourceMetadata) {
		t.Errorf("403 WWW-Authenticate = %q", h)
	}
	if r := e.do(request{Method: "GET", Path: "/v1/capabilities", Header: bearer(tok.AccessToken)}); r.Status != http.StatusOK {
		t.Errorf("capabilities: %d", r.Status)
	}
}

// TestRefreshMayNarrowButNotWidenScopes pins RFC 6749 section 6.
func TestRefreshMayNarrowButNotWidenScopes(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeCapabilitiesRead, bokat.ScopeBookingsRead)
	tok := e.exchange(conf, "narrow@example.se")
	refresh := func(rt, scope string) (int, map[string]any) {
		status, body, _ := e.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "scope": {scope}}, conf.ClientID, conf.ClientSecret)
		return status, body
	}
	status, body := refresh(tok.RefreshToken, "service.bookings.confirm")
	if status != 400 || body["error"] != "invalid_scope" {
		t.Fatalf("widening refresh: %d %v", status, body)
	}
	// The refused request changed nothing: the token was not rotated.
	status, body = refresh(tok.RefreshToken, "service.capabilities.read")
	if status != 200 || body["scope"] != "service.capabilities.read" {
		t.Fatalf("narrowing refresh: %d %v", status, body)
	}
	p := mustPrincipal(t, e, body["access_token"].(string))
	if !slices.Equal(p.Scopes, []bokat.Scope{bokat.ScopeCapabilitiesRead}) {
		t.Errorf("narrowed access token scopes = %v", p.Scopes)
	}
	// The rotated refresh token keeps the whole grant.
	status, body = refresh(body["refresh_token"].(string), "service.capabilities.read service.bookings.read")
	if status != 200 || body["scope"] != "service.capabilities.read service.bookings.read" {
		t.Fatalf("refresh back to the full grant: %d %v", status, body)
	}
}

// TestDelegatedTokensActOnlyForTheirUser: a delegated token's principal is
// the client together with the signed-in user (DECISIONS.md "Ownership").
// A booking confirmed with one user's real access token is invisible to
// another user of the same client, to the same user through another client
// and to a partner: status answers the not-found shape, cancel and
// reschedule 404 booking_not_found.
func TestDelegatedTokensActOnlyForTheirUser(t *testing.T) {
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		e.withDemoSupply()
		scopes := []bokat.Scope{bokat.ScopeBookingsConfirm, bokat.ScopeBookingsRead, bokat.ScopeBookingsCancel, bokat.ScopeBookingsReschedule}
		assistant := e.newClient("Hemhjälpen AI", false, scopes...)
		otherApp := e.newClient("Annan app", false, scopes...)
		anna := e.exchange(assistant, "anna@example.se")
		bertil := e.exchange(assistant, "bertil@example.se")
		annaElsewhere := e.exchange(otherApp, "anna@example.se")
		annaAgain := e.exchange(assistant, "ANNA@example.se")

		opts := e.options(t, faucetSearch())
		r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(opts[0], "anna-1"), Header: bearer(anna.AccessToken)})
		if r.Status != http.StatusCreated {
			t.Fatalf("confirm with Anna's token: %d %s", r.Status, r.Body)
		}
		id := r.JSON["booking"].(map[string]any)["id"].(string)
		requestID := r.JSON["request_id"].(string)

		cases := []struct {
			name  string
			token string
			owner bool
		}{
			{"the owner", anna.AccessToken, true},
			{"the owner in a later grant (same user id)", annaAgain.AccessToken, true},
			{"another user of the same client", bertil.AccessToken, false},
			{"the same user through another client", annaElsewhere.AccessToken, false},
			{"a partner credential", e.token, false},
		}
		for _, tc := range cases {
			for _, ref := range []string{id, requestID} {
				s := e.do(request{Method: "GET", Path: "/v1/bookings/" + ref, Header: bearer(tc.token)})
				if s.Status != http.StatusOK || s.JSON["found"] != tc.owner {
					t.Errorf("%s reading %s: %d found=%v, want found=%v", tc.name, ref, s.Status, s.JSON["found"], tc.owner)
				}
			}
			if tc.owner {
				continue
			}
			c := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/cancel", Body: cancelBody("x-" + tc.name), Header: bearer(tc.token)})
			checkProblem(t, c, http.StatusNotFound, bokat.CodeBookingNotFound, "/v1/bookings/"+id+"/cancel")
			m := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/reschedule", Body: rescheduleBody(opts[1], "y-"+tc.name), Header: bearer(tc.token)})
			checkProblem(t, m, http.StatusNotFound, bokat.CodeBookingNotFound, "/v1/bookings/"+id+"/reschedule")
		}
		if c := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/cancel", Body: cancelBody("anna-2"), Header: bearer(anna.AccessToken)}); c.Status != http.StatusOK {
			t.Errorf("the owner's cancel: %d %s", c.Status, c.Body)
		}
	})
}

// TestPartnerOnlyPathsRefuseOAuthTokens: the deprecated paths accept only
// the partner credential forms.
func TestPartnerOnlyPathsRefuseOAuthTokens(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead)
	tok := e.exchange(conf, "legacy@example.se")
	r := e.do(request{Method: "GET", Path: "/api/public/bookings/bk_legacy", Header: bearer(tok.AccessToken)})
	if r.Status != http.StatusUnauthorized || r.JSON["ok"] != false || r.JSON["error"] != "unauthorized" {
		t.Fatalf("OAuth token on a partner-only path: %d %s", r.Status, r.Body)
	}
	if h := r.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="invalid_token"`) {
		t.Errorf("WWW-Authenticate = %q", h)
	}
	// The partner token is accepted there (and owns nothing: the not-found shape).
	r = e.do(request{Method: "GET", Path: "/api/public/bookings/bk_legacy", Header: map[string]string{"X-Service-Requests-Token": e.token}})
	if r.Status != http.StatusOK || r.JSON["found"] != false {
		t.Fatalf("partner token on the partner-only path: %d %s", r.Status, r.Body)
	}
	// Access tokens go only in Authorization: Bearer.
	r = e.do(request{Method: "GET", Path: "/v1/bookings/bk_legacy", Header: map[string]string{"X-Service-Requests-Token": tok.AccessToken}})
	checkInvalidToken(t, r, "/v1/bookings/bk_legacy")
}

// TestPagesAreLocalisedAndUnframeable: Swedish by default, English on
// request; no framing, no caching, no scripts; cookies HttpOnly and Lax.
func TestPagesAreLocalisedAndUnframeable(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsSearch, bokat.ScopeBookingsConfirm)
	q := authzQuery(conf.ClientID)
	q.Set("scope", "service.bookings.search service.bookings.confirm")
	cases := []struct {
		name, query, acceptLanguage string
		wantLang, wantText          string
	}{
		{"default", "", "", "sv", "Logga in med din e-postadress"},
		{"lang=en", "&lang=en", "", "en", "Sign in with your e-mail address"},
		{"Accept-Language English", "", "en-GB,en;q=0.9", "en", "Sign in with your e-mail address"},
		{"Accept-Language German", "", "de-DE,de;q=0.9", "sv", "Logga in med din e-postadress"},
		{"lang=sv beats Accept-Language", "&lang=sv", "en", "sv", "Logga in med din e-postadress"},
		{"ui_locales", "&ui_locales=en", "", "en", "Sign in with your e-mail address"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := e.browser()
			if tc.acceptLanguage != "" {
				b.header = map[string]string{"Accept-Language": tc.acceptLanguage}
			}
			resp, body := b.get("/oauth/sign-in?" + q.Encode() + tc.query)
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<html lang="`+tc.wantLang+`">`) || !strings.Contains(body, tc.wantText) ||
				!strings.Contains(body, "Hemhjälpen AI") {
				t.Fatalf("sign-in page: %d\n%s", resp.StatusCode, body)
			}
			h := resp.Header
			if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			if h.Get("X-Frame-Options") != "DENY" || h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("headers %v", h)
			}
			if strings.Contains(body, "<script") {
				t.Error("the page has a script")
			}
			for _, c := range resp.Cookies() {
				if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure {
					t.Errorf("cookie %s: HttpOnly %v SameSite %v Secure %v; want HttpOnly, Lax, not Secure on http", c.Name, c.HttpOnly, c.SameSite, c.Secure)
				}
			}
		})
	}

	// The consent page says what the scopes allow, in the page's language,
	// and the code e-mail is asked for in it.
	for lang, want := range map[string][]string{
		"sv": {"Godkänn", "Neka", "Söka lediga tider och fasta priser", "Boka en tid som du uttryckligen har valt", "Inloggad som consent-sv@example.se"},
		"en": {"Approve", "Deny", "Search free times and fixed prices", "Book a time you have explicitly chosen", "Signed in as consent-en@example.se"},
	} {
		b := e.browser()
		email := "consent-" + lang + "@example.se"
		body := e.signIn(b, conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))+"&lang="+lang, email)
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s consent page lacks %q:\n%s", lang, w, body)
			}
		}
		if strings.Contains(body, "Se status för bokningar") || strings.Contains(body, "See the status of bookings") {
			t.Errorf("%s consent page lists a scope that was not requested", lang)
		}
		if got := e.sender.last(t, email).locale; got != lang {
			t.Errorf("code e-mail locale = %q, want %q", got, lang)
		}
	}
}

// TestLogsCarryNoSecrets: no token, code, secret or e-mail reaches the logs
// in production; in development the sign-in code is echoed once, on its
// own line, and nothing else is.
func TestLogsCarryNoSecrets(t *testing.T) {
	t.Parallel()
	for _, production := range []bool{true, false} {
		e := newOAuthEnv(t, sqliteDB(t), oauthSetup{production: production})
		ctx := context.Background()
		conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead)
		verifier := oauth2.GenerateVerifier()
		code := e.authorize(conf, verifier, "secret.person@example.se")
		tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if err != nil {
			t.Fatal(err)
		}
		e.do(request{Method: "GET", Path: "/v1/capabilities", Header: bearer(fresh.AccessToken)})
		e.post("/oauth/revoke", url.Values{"token": {fresh.RefreshToken}}, conf.ClientID, conf.ClientSecret)
		_, _ = conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)) // a replay, refused

		logs := e.logs.String()
		signInCode := e.sender.last(t, "secret.person@example.se").code
		for name, secret := range map[string]string{
			"authorization code": code, "access token": tok.AccessToken, "refresh token": tok.RefreshToken,
			"rotated access token": fresh.AccessToken, "rotated refresh token": fresh.RefreshToken,
			"client secret": conf.ClientSecret, "verifier": verifier, "e-mail": "secret.person", "state": "st-xxxxxxxx",
		} {
			if strings.Contains(logs, secret) {
				t.Errorf("production=%v: the logs contain the %s", production, name)
			}
		}
		lines := 0
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, signInCode) {
				lines++
				if !strings.Contains(line, "development sign-in code") {
					t.Errorf("the sign-in code appears in another log line: %s", line)
				}
			}
		}
		if want := map[bool]int{true: 0, false: 1}[production]; lines != want {
			t.Errorf("production=%v: the sign-in code is in %d log lines, want %d", production, lines, want)
		}
	}
}
