package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/oauth"
)

// A valid S256 challenge (RFC 7636 appendix B) for requests built by hand.
const (
	rfcVerifier  = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	rfcChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
)

func authzQuery(clientID string) url.Values {
	return url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {callbackURI},
		"scope": {"service.bookings.read"}, "state": {"s1"},
		"code_challenge": {rfcChallenge}, "code_challenge_method": {"S256"},
	}
}

// TestAuthorizationRequestRefusals pins RFC 6749 4.1.2.1 and RFC 7636 4.4.1:
// while the client or its redirect URI cannot be trusted the customer sees
// an error page and is never redirected; after that, errors go back to the
// registered redirect URI with the RFC error code, the state and the issuer.
func TestAuthorizationRequestRefusals(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	readOnly := e.newClient("Läsaren", false, bokat.ScopeBookingsRead)
	multi, _, err := oauth.CreateClient(context.Background(), e.db, e.hasher, oauth.ClientSpec{
		Name: "Två adresser", RedirectURIs: []string{callbackURI, "https://app.example.se/cb"}, Scopes: bokat.AllScopes(),
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		client string
		edit   func(v url.Values)
		// wantError is the RFC error code sent to the redirect URI; empty
		// means an error page (wantPage is its reason) or, when both are
		// empty, an accepted request (redirect to sign-in).
		wantError string
		wantPage  string
	}{
		{"plain method", readOnly.ClientID, func(v url.Values) { v.Set("code_challenge_method", "plain"); v.Set("code_challenge", rfcVerifier) }, "invalid_request", ""},
		{"missing challenge", readOnly.ClientID, func(v url.Values) { v.Del("code_challenge"); v.Del("code_challenge_method") }, "invalid_request", ""},
		{"missing method (plain by default)", readOnly.ClientID, func(v url.Values) { v.Del("code_challenge_method") }, "invalid_request", ""},
		{"unknown method", readOnly.ClientID, func(v url.Values) { v.Set("code_challenge_method", "S512") }, "invalid_request", ""},
		{"malformed challenge", readOnly.ClientID, func(v url.Values) { v.Set("code_challenge", "too-short") }, "invalid_request", ""},
		{"token response type", readOnly.ClientID, func(v url.Values) { v.Set("response_type", "token") }, "unsupported_response_type", ""},
		{"missing response type", readOnly.ClientID, func(v url.Values) { v.Del("response_type") }, "invalid_request", ""},
		{"unknown scope", readOnly.ClientID, func(v url.Values) { v.Set("scope", "service.everything") }, "invalid_scope", ""},
		{"scope not granted to the client", readOnly.ClientID, func(v url.Values) { v.Set("scope", "service.bookings.read service.bookings.confirm") }, "invalid_scope", ""},
		{"repeated parameter", readOnly.ClientID, func(v url.Values) { v.Add("scope", "service.bookings.read") }, "invalid_request", ""},
		{"unknown client", "oc_00000000000000000000000000000000", nil, "", "unknown_client"},
		{"missing client", "", func(v url.Values) { v.Del("client_id") }, "", "invalid_client_id"},
		{"redirect URI with another path", readOnly.ClientID, func(v url.Values) { v.Set("redirect_uri", "http://127.0.0.1:8123/other") }, "", "invalid_redirect_uri"},
		{"redirect URI on another host", readOnly.ClientID, func(v url.Values) { v.Set("redirect_uri", "https://evil.example/callback") }, "", "invalid_redirect_uri"},
		{"redirect URI with an added query", readOnly.ClientID, func(v url.Values) { v.Set("redirect_uri", callbackURI+"?next=evil") }, "", "invalid_redirect_uri"},
		{"redirect URI with a prefix match", readOnly.ClientID, func(v url.Values) { v.Set("redirect_uri", callbackURI+"x") }, "", "invalid_redirect_uri"},
		{"repeated redirect URI", readOnly.ClientID, func(v url.Values) { v.Add("redirect_uri", callbackURI) }, "", "invalid_redirect_uri"},
		{"no redirect URI, several registered", multi, func(v url.Values) { v.Del("redirect_uri") }, "", "redirect_uri_required"},
		{"loopback redirect URI on another port (RFC 8252)", readOnly.ClientID, func(v url.Values) { v.Set("redirect_uri", "http://127.0.0.1:50123/callback") }, "", ""},
		{"no redirect URI, one registered", readOnly.ClientID, func(v url.Values) { v.Del("redirect_uri") }, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := authzQuery(tc.client)
			if tc.edit != nil {
				tc.edit(v)
			}
			resp, body := e.browser().get("/oauth/authorize?" + v.Encode())
			loc := resp.Header.Get("Location")
			switch {
			case tc.wantError != "":
				u, err := url.Parse(loc)
				if resp.StatusCode != http.StatusFound || err != nil {
					t.Fatalf("status %d Location %q, want a redirect to the client", resp.StatusCode, loc)
				}
				q := u.Query()
				if got := u.Scheme + "://" + u.Host + u.Path; got != callbackURI {
					t.Errorf("redirected to %s, want the registered %s", got, callbackURI)
				}
				if q.Get("error") != tc.wantError || q.Get("state") != "s1" || q.Get("iss") != "http://bokat.test" ||
					q.Get("error_description") == "" || q.Get("code") != "" {
					t.Errorf("error response %v, want error=%s with state, iss and a description", q, tc.wantError)
				}
			case tc.wantPage != "":
				if resp.StatusCode != http.StatusBadRequest || loc != "" {
					t.Fatalf("status %d Location %q, want a 400 error page and no redirect", resp.StatusCode, loc)
				}
				if !strings.Contains(body, "<code>"+tc.wantPage+"</code>") || !strings.Contains(body, `lang="sv"`) {
					t.Errorf("error page does not name %s:\n%s", tc.wantPage, body)
				}
				if strings.Contains(body, "evil") {
					t.Error("the error page links to the untrusted redirect URI")
				}
			default:
				if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/oauth/sign-in?") {
					t.Fatalf("status %d Location %q, want the sign-in page", resp.StatusCode, loc)
				}
			}
		})
	}
}

// newCode has the signed-in browser approve a new authorization for conf
// and returns the code.
func (e *oauthEnv) newCode(b *browser, conf *oauth2.Config, verifier string) string {
	e.t.Helper()
	resp, body := b.get(conf.AuthCodeURL("again", oauth2.S256ChallengeOption(verifier)))
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("signed-in authorization: %d, want the consent page", resp.StatusCode)
	}
	loc := e.decide(b, body, "approve")
	return loc.Query().Get("code")
}

// checkTokenError asserts an RFC 6749 5.2 error response.
func checkTokenError(t *testing.T, status int, body map[string]any, h http.Header, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus || body["error"] != wantCode {
		t.Fatalf("got %d %v, want %d error=%s", status, body, wantStatus, wantCode)
	}
	if d, _ := body["error_description"].(string); d == "" {
		t.Error("no error_description")
	}
	if h.Get("Cache-Control") != "no-store" || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Errorf("Cache-Control %q Content-Type %q, want no-store JSON", h.Get("Cache-Control"), h.Get("Content-Type"))
	}
	if _, ok := body["api_request_id"]; ok {
		t.Error("an OAuth response carries v1 metadata")
	}
	if wantStatus == http.StatusUnauthorized && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("401 WWW-Authenticate = %q, want Basic", h.Get("WWW-Authenticate"))
	}
}

// TestTokenEndpointRefusals pins RFC 6749 4.1.3, 5.2 and 2.3.1 and RFC 7636
// 4.6 at the token endpoint.
func TestTokenEndpointRefusals(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead)
	other := e.newClient("Annan app", false, bokat.ScopeBookingsRead)
	b := e.browser()
	verifier := oauth2.GenerateVerifier()
	firstCode := e.authorize(conf, verifier, "tokens@example.se")
	e.signIn(b, conf.AuthCodeURL("x", oauth2.S256ChallengeOption(verifier)), "tokens@example.se")
	codeForm := func(code string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callbackURI}, "code_verifier": {verifier}}
	}
	if _, err := conf.Exchange(context.Background(), firstCode, oauth2.VerifierOption(verifier)); err != nil {
		t.Fatalf("valid exchange: %v", err)
	}

	cases := []struct {
		name       string
		form       func(code string) url.Values
		id, secret string // Basic credentials; empty: none
		wantStatus int
		wantCode   string
	}{
		{"wrong verifier", func(c string) url.Values {
			f := codeForm(c)
			f.Set("code_verifier", oauth2.GenerateVerifier())
			return f
		},
			conf.ClientID, conf.ClientSecret, 400, "invalid_grant"},
		{"verifier of the RFC example", func(c string) url.Values { f := codeForm(c); f.Set("code_verifier", rfcVerifier); return f },
			conf.ClientID, conf.ClientSecret, 400, "invalid_grant"},
		{"missing verifier", func(c string) url.Values { f := codeForm(c); f.Del("code_verifier"); return f },
			conf.ClientID, conf.ClientSecret, 400, "invalid_request"},
		{"malformed verifier", func(c string) url.Values { f := codeForm(c); f.Set("code_verifier", "short"); return f },
			conf.ClientID, conf.ClientSecret, 400, "invalid_request"},
		{"redirect URI mismatch", func(c string) url.Values {
			f := codeForm(c)
			f.Set("redirect_uri", "http://127.0.0.1:8123/other")
			return f
		},
			conf.ClientID, conf.ClientSecret, 400, "invalid_grant"},
		{"redirect URI omitted although it was sent", func(c string) url.Values { f := codeForm(c); f.Del("redirect_uri"); return f },
			conf.ClientID, conf.ClientSecret, 400, "invalid_grant"},
		{"unknown code", func(string) url.Values { return codeForm("bkc_unknown") }, conf.ClientID, conf.ClientSecret, 400, "invalid_grant"},
		{"code of another client", codeForm, other.ClientID, other.ClientSecret, 400, "invalid_grant"},
		{"unknown client", codeForm, "oc_00000000000000000000000000000000", "bks_x", 401, "invalid_client"},
		{"wrong client secret", codeForm, conf.ClientID, conf.ClientSecret + "x", 401, "invalid_client"},
		{"another client's secret", codeForm, conf.ClientID, other.ClientSecret, 401, "invalid_client"},
		{"confidential client without its secret", func(c string) url.Values { f := codeForm(c); f.Set("client_id", conf.ClientID); return f },
			"", "", 401, "invalid_client"},
		{"two authentication methods", func(c string) url.Values { f := codeForm(c); f.Set("client_secret", conf.ClientSecret); return f },
			conf.ClientID, conf.ClientSecret, 400, "invalid_request"},
		{"unsupported grant type", func(c string) url.Values { f := codeForm(c); f.Set("grant_type", "password"); return f },
			conf.ClientID, conf.ClientSecret, 400, "unsupported_grant_type"},
		{"client credentials grant", func(c string) url.Values { f := codeForm(c); f.Set("grant_type", "client_credentials"); return f },
			conf.ClientID, conf.ClientSecret, 400, "unsupported_grant_type"},
		{"missing grant type", func(c string) url.Values { f := codeForm(c); f.Del("grant_type"); return f },
			conf.ClientID, conf.ClientSecret, 400, "invalid_request"},
		{"repeated parameter", func(c string) url.Values { f := codeForm(c); f.Add("code", c); return f },
			conf.ClientID, conf.ClientSecret, 400, "invalid_request"},
		{"missing code", func(c string) url.Values { f := codeForm(c); f.Del("code"); return f },
			conf.ClientID, conf.ClientSecret, 400, "invalid_request"},
		{"refresh token that is not one", func(string) url.Values {
			return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"bkr_unknown"}}
		}, conf.ClientID, conf.ClientSecret, 400, "invalid_grant"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code := e.newCode(b, conf, verifier)
			status, body, h := e.tokenRequest(tc.form(code), tc.id, tc.secret)
			checkTokenError(t, status, body, h, tc.wantStatus, tc.wantCode)
		})
	}

	t.Run("JSON body", func(t *testing.T) {
		req, _ := http.NewRequest("POST", e.http.URL+"/oauth/token", strings.NewReader(`{"grant_type":"authorization_code"}`))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(conf.ClientID, conf.ClientSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("JSON body: %d, want 400 no-store", resp.StatusCode)
		}
	})

	t.Run("a code refused for a wrong verifier is spent", func(t *testing.T) {
		code := e.newCode(b, conf, verifier)
		f := codeForm(code)
		f.Set("code_verifier", oauth2.GenerateVerifier())
		if status, _, _ := e.tokenRequest(f, conf.ClientID, conf.ClientSecret); status != 400 {
			t.Fatalf("wrong verifier: %d", status)
		}
		status, body, h := e.tokenRequest(codeForm(code), conf.ClientID, conf.ClientSecret)
		checkTokenError(t, status, body, h, 400, "invalid_grant")
	})

	t.Run("a code tried by another client stays usable by its own", func(t *testing.T) {
		code := e.newCode(b, conf, verifier)
		if status, _, _ := e.tokenRequest(codeForm(code), other.ClientID, other.ClientSecret); status != 400 {
			t.Fatalf("other client: %d", status)
		}
		if _, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier)); err != nil {
			t.Fatalf("own client after another's attempt: %v", err)
		}
	})

	t.Run("client_secret_post", func(t *testing.T) {
		f := codeForm(e.newCode(b, conf, verifier))
		f.Set("client_id", conf.ClientID)
		f.Set("client_secret", conf.ClientSecret)
		status, body, h := e.tokenRequest(f, "", "")
		if status != 200 || body["token_type"] != "Bearer" || h.Get("Cache-Control") != "no-store" || h.Get("Pragma") != "no-cache" {
			t.Fatalf("client_secret_post: %d %v", status, body)
		}
	})

	t.Run("expired code", func(t *testing.T) {
		code := e.newCode(b, conf, verifier)
		e.clock.Advance(oauth.CodeTTL + time.Second)
		status, body, h := e.tokenRequest(codeForm(code), conf.ClientID, conf.ClientSecret)
		checkTokenError(t, status, body, h, 400, "invalid_grant")
		if !strings.Contains(body["error_description"].(string), "expired") {
			t.Errorf("description %q does not say expired", body["error_description"])
		}
	})
}

// TestReusedCodeRevokesItsTokens pins RFC 6749 4.1.2: a second use of an
// authorization code is refused and revokes every token issued from it.
func TestReusedCodeRevokesItsTokens(t *testing.T) {
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		ctx := context.Background()
		conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead)
		verifier := oauth2.GenerateVerifier()
		code := e.authorize(conf, verifier, "reuse@example.se")
		tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		insertOwnedEvent(t, e.db, conf.ClientID, mustPrincipal(t, e, tok.AccessToken).UserID, "bk_reuse")
		if r := e.do(request{Method: "GET", Path: "/v1/bookings/bk_reuse", Header: bearer(tok.AccessToken), NoValidate: true}); r.Status != 200 {
			t.Fatalf("before reuse: %d", r.Status)
		}
		_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if retrieveErrorCode(err) != "invalid_grant" {
			t.Fatalf("second use of the code: %v, want invalid_grant", err)
		}
		checkInvalidToken(t, e.do(request{Method: "GET", Path: "/v1/bookings/bk_reuse", Header: bearer(tok.AccessToken)}), "/v1/bookings/bk_reuse")
		_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if retrieveErrorCode(err) != "invalid_grant" {
			t.Fatalf("refresh token of a reused code: %v, want invalid_grant", err)
		}
	})
}

func mustPrincipal(t *testing.T, e *oauthEnv, access string) bokat.Principal {
	t.Helper()
	p, err := e.as.VerifyAccessToken(context.Background(), access)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAccessTokensExpire: after 15 minutes the token answers 401.
func TestAccessTokensExpire(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead)
	tok := e.exchange(conf, "expiry@example.se")
	insertOwnedEvent(t, e.db, conf.ClientID, mustPrincipal(t, e, tok.AccessToken).UserID, "bk_exp")
	e.clock.Advance(oauth.AccessTokenTTL - time.Second)
	if r := e.do(request{Method: "GET", Path: "/v1/bookings/bk_exp", Header: bearer(tok.AccessToken), NoValidate: true}); r.Status != 200 {
		t.Fatalf("just before expiry: %d", r.Status)
	}
	e.clock.Advance(time.Second)
	checkInvalidToken(t, e.do(request{Method: "GET", Path: "/v1/bookings/bk_exp", Header: bearer(tok.AccessToken)}), "/v1/bookings/bk_exp")
	// The refresh token still works and gives a working access token.
	fresh, err := conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do(request{Method: "GET", Path: "/v1/bookings/bk_exp", Header: bearer(fresh.AccessToken), NoValidate: true}); r.Status != 200 {
		t.Fatalf("refreshed access token: %d", r.Status)
	}
}

// TestRevocation pins RFC 7009.
func TestRevocation(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	ctx := context.Background()
	conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead)
	other := e.newClient("Annan app", false, bokat.ScopeBookingsRead)
	probe := func(access string) response {
		return e.do(request{Method: "GET", Path: "/v1/bookings/bk_rev", Header: bearer(access), NoValidate: true})
	}
	revoke := func(c *oauth2.Config, token, hint string) (int, map[string]any) {
		f := url.Values{"token": {token}}
		if hint != "" {
			f.Set("token_type_hint", hint)
		}
		status, body, h := e.post("/oauth/revoke", f, c.ClientID, c.ClientSecret)
		if status == 200 && h.Get("Cache-Control") != "no-store" {
			t.Error("revocation response without Cache-Control: no-store")
		}
		return status, body
	}
	tok := e.exchange(conf, "revoke@example.se")
	insertOwnedEvent(t, e.db, conf.ClientID, mustPrincipal(t, e, tok.AccessToken).UserID, "bk_rev")

	t.Run("unknown token answers 200", func(t *testing.T) {
		if status, _ := revoke(conf, "bka_unknown", ""); status != 200 {
			t.Fatalf("status %d", status)
		}
	})
	t.Run("another client's token is left alone and answers 200", func(t *testing.T) {
		if status, _ := revoke(other, tok.AccessToken, "access_token"); status != 200 {
			t.Fatalf("status %d", status)
		}
		if r := probe(tok.AccessToken); r.Status != 200 {
			t.Fatalf("token revoked by another client: %d", r.Status)
		}
	})
	t.Run("without client authentication", func(t *testing.T) {
		status, body, h := e.post("/oauth/revoke", url.Values{"token": {tok.AccessToken}}, "", "")
		checkTokenError(t, status, body, h, 401, "invalid_client")
	})
	t.Run("without a token", func(t *testing.T) {
		status, body, h := e.post("/oauth/revoke", url.Values{}, conf.ClientID, conf.ClientSecret)
		checkTokenError(t, status, body, h, 400, "invalid_request")
	})
	t.Run("an access token", func(t *testing.T) {
		if status, _ := revoke(conf, tok.AccessToken, "access_token"); status != 200 {
			t.Fatalf("status %d", status)
		}
		checkInvalidToken(t, e.do(request{Method: "GET", Path: "/v1/bookings/bk_rev", Header: bearer(tok.AccessToken)}), "/v1/bookings/bk_rev")
		// Only that token: the refresh token still works.
		fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if err != nil {
			t.Fatalf("refresh after revoking the access token: %v", err)
		}
		tok = fresh
	})
	t.Run("a refresh token revokes its family", func(t *testing.T) {
		if r := probe(tok.AccessToken); r.Status != 200 {
			t.Fatalf("before: %d", r.Status)
		}
		// A wrong hint must not matter.
		if status, _ := revoke(conf, tok.RefreshToken, "access_token"); status != 200 {
			t.Fatalf("status %d", status)
		}
		_, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if retrieveErrorCode(err) != "invalid_grant" {
			t.Fatalf("revoked refresh token: %v", err)
		}
		checkInvalidToken(t, e.do(request{Method: "GET", Path: "/v1/bookings/bk_rev", Header: bearer(tok.AccessToken)}), "/v1/bookings/bk_rev")
	})
}

// TestConsentDenyRedirectsWithAccessDenied pins RFC 6749 4.1.2.1.
func TestConsentDenyRedirectsWithAccessDenied(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false)
	b := e.browser()
	consent := e.signIn(b, conf.AuthCodeURL("deny-state", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "deny@example.se")
	loc := e.decide(b, consent, "deny")
	q := loc.Query()
	if q.Get("error") != "access_denied" || q.Get("state") != "deny-state" || q.Get("code") != "" || q.Get("iss") != "http://bokat.test" {
		t.Fatalf("deny redirected with %v, want error=access_denied, the state and no code", q)
	}
	var grants int
	if err := e.db.R().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM oauth_grants`).Scan(&grants); err != nil || grants != 0 {
		t.Fatalf("%d grants stored after a deny (err %v)", grants, err)
	}
}

// TestCrossOriginAndForgedFormsAreRefused: the forms accept only same-origin
// POSTs (net/http.CrossOriginProtection) that carry the browser's token.
func TestCrossOriginAndForgedFormsAreRefused(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false)
	b := e.browser()
	consent := e.signIn(b, conf.AuthCodeURL("csrf", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "csrf@example.se")
	approve := formOf(t, consent, "/oauth/authorize")
	approve.Set("decision", "approve")
	cases := []struct {
		name   string
		form   func() url.Values
		header map[string]string
	}{
		{"cross-site fetch metadata", func() url.Values { return approve }, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"foreign Origin", func() url.Values { return approve }, map[string]string{"Origin": "https://evil.example"}},
		{"no form token", func() url.Values {
			f := url.Values{}
			for k, v := range approve {
				if k != "csrf_token" {
					f[k] = v
				}
			}
			return f
		}, nil},
		{"another browser's form token", func() url.Values {
			f := url.Values{}
			for k, v := range approve {
				f[k] = v
			}
			f.Set("csrf_token", strings.Repeat("0", 64))
			return f
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := b.post("/oauth/authorize", tc.form(), tc.header)
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
				t.Fatalf("status %d Location %q, want 403 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
			}
			if !strings.Contains(body, "Formuläret kunde inte verifieras") {
				t.Errorf("403 page:\n%s", body)
			}
		})
	}
	t.Run("cross-site sign-in sends no code", func(t *testing.T) {
		before := len(e.sender.all())
		f := url.Values{"email": {"victim@example.se"}}
		for k, v := range formOf(t, consent, "/oauth/sign-out") {
			f[k] = v
		}
		resp, _ := b.post("/oauth/sign-in", f, map[string]string{"Sec-Fetch-Site": "cross-site"})
		if resp.StatusCode != http.StatusForbidden || len(e.sender.all()) != before {
			t.Fatalf("status %d, %d codes sent; want 403 and none", resp.StatusCode, len(e.sender.all())-before)
		}
	})
	t.Run("the genuine form still works", func(t *testing.T) {
		resp, body := b.post("/oauth/authorize", approve, map[string]string{"Sec-Fetch-Site": "same-origin"})
		loc := expectRedirect(t, resp, body)
		if !strings.HasPrefix(loc, callbackURI+"?") || !strings.Contains(loc, "code=") {
			t.Fatalf("approve went to %q", loc)
		}
	})
}

// TestSignInCodeAttemptLimit: a code may be tried five times; then it is
// dead, even for the right code.
func TestSignInCodeAttemptLimit(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false)
	authURL := conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	b := e.browser()
	form := e.requestCode(b, authURL, "limit@example.se")
	right := e.sender.last(t, "limit@example.se").code
	handle := cookieNamed(t, b, "/oauth/sign-in/code", "bokat_signin")
	wrong := "00000000"
	if wrong == right {
		wrong = "11111111"
	}
	for left := oauth.SignInAttempts - 1; left >= 0; left-- {
		form.Set("code", wrong)
		resp, body := b.post("/oauth/sign-in/code", form, nil)
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("wrong code: %d", resp.StatusCode)
		}
		switch {
		case left > 0 && !strings.Contains(body, "Du har "+string(rune('0'+left))+" försök kvar"):
			t.Fatalf("after a wrong code the page does not say %d tries are left:\n%s", left, body)
		case left == 0 && !strings.Contains(body, "Begär en ny kod"):
			t.Fatalf("after the last try the page does not say the code is dead:\n%s", body)
		}
	}
	// The page dropped the code's cookie; a browser that kept it is refused
	// by the server all the same.
	u, _ := url.Parse(e.http.URL + "/oauth/sign-in/code")
	b.client.Jar.SetCookies(u, []*http.Cookie{{Name: "bokat_signin", Value: handle, Path: "/oauth/sign-in"}})
	form.Set("code", right)
	resp, body := b.post("/oauth/sign-in/code", form, nil)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(body, "Begär en ny kod") {
		t.Fatalf("right code after the limit: %d %q, want refused", resp.StatusCode, resp.Header.Get("Location"))
	}
	// A new code works.
	form = e.requestCode(b, authURL, "limit@example.se")
	form.Set("code", " "+e.sender.last(t, "limit@example.se").code[:4]+"-"+e.sender.last(t, "limit@example.se").code[4:]+" ")
	resp, body = b.post("/oauth/sign-in/code", form, nil)
	if loc := expectRedirect(t, resp, body); !strings.HasPrefix(loc, "/oauth/authorize?") {
		t.Fatalf("new code (typed with spaces and a dash) went to %q", loc)
	}
}

// TestSignInCodeIsBoundToItsBrowserAndExpires.
func TestSignInCodeIsBoundToItsBrowserAndExpires(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false)
	authURL := conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))

	a := e.browser()
	e.requestCode(a, authURL, "bound@example.se")
	code := e.sender.last(t, "bound@example.se").code
	// Another browser holding the same handle cookie (but its own browser
	// id) cannot use the code.
	other := e.browser()
	u, _ := url.Parse(e.http.URL + "/oauth/sign-in/code")
	other.client.Jar.SetCookies(u, []*http.Cookie{{Name: "bokat_signin", Value: cookieNamed(t, a, "/oauth/sign-in/code", "bokat_signin"), Path: "/oauth/sign-in"}})
	resp, body := other.get("/oauth/sign-in/code?" + authzQuery(conf.ClientID).Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("code page in the other browser: %d %s", resp.StatusCode, body)
	}
	f := formOf(t, body, "/oauth/sign-in/code")
	f.Set("code", code)
	resp, body = other.post("/oauth/sign-in/code", f, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "försök kvar") {
		t.Fatalf("code used in another browser: %d, want refused as a wrong code", resp.StatusCode)
	}

	// Ten minutes later the code is dead in its own browser too.
	b := e.browser()
	form := e.requestCode(b, authURL, "late@example.se")
	e.clock.Advance(oauth.SignInCodeTTL + time.Second)
	form.Set("code", e.sender.last(t, "late@example.se").code)
	resp, body = b.post("/oauth/sign-in/code", form, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Koden har gått ut") {
		t.Fatalf("expired code: %d\n%s", resp.StatusCode, body)
	}
}

// TestSignInSendLimitPerAddress: at most SignInSendLimit codes per address
// per hour, counted in the store whatever the limiter says (here: none).
func TestSignInSendLimitPerAddress(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false)
	authURL := conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	b := e.browser()
	resp, body := b.get(authURL)
	resp, body = b.get(expectRedirect(t, resp, body))
	form := formOf(t, body, "/oauth/sign-in")
	send := func(email string) (*http.Response, string) {
		form.Set("email", email)
		return b.post("/oauth/sign-in", form, nil)
	}
	for i := 0; i < oauth.SignInSendLimit; i++ {
		// The address counts however it is written.
		if resp, _ := send([]string{"many@example.se", "MANY@example.se", " many@Example.SE "}[i%3]); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("code %d: %d", i+1, resp.StatusCode)
		}
	}
	resp, body = send("many@example.se")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "för många koder") {
		t.Fatalf("sixth code: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if n := len(e.sender.all()); n != oauth.SignInSendLimit {
		t.Fatalf("%d codes sent, want %d", n, oauth.SignInSendLimit)
	}
	if resp, _ := send("other@example.se"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("another address: %d", resp.StatusCode)
	}
	e.clock.Advance(oauth.SignInSendWindow + time.Second)
	if resp, _ := send("many@example.se"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("after an hour: %d", resp.StatusCode)
	}
}

// TestSignInFormRefusals: an invalid address, a failing sender, and
// production without a sender.
func TestSignInFormRefusals(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false)
	authURL := conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	b := e.browser()
	resp, body := b.get(authURL)
	resp, body = b.get(expectRedirect(t, resp, body))
	form := formOf(t, body, "/oauth/sign-in")
	form.Set("email", "Namn <namn@example.se>")
	resp, body = b.post("/oauth/sign-in", form, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Ange en giltig e-postadress") {
		t.Fatalf("invalid address: %d", resp.StatusCode)
	}
	e.sender.mu.Lock()
	e.sender.fail = true
	e.sender.mu.Unlock()
	form.Set("email", "fail@example.se")
	resp, body = b.post("/oauth/sign-in", form, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "Vi kunde inte skicka koden") {
		t.Fatalf("failing sender: %d", resp.StatusCode)
	}

	prod := newOAuthEnv(t, sqliteDB(t), oauthSetup{production: true, noSender: true})
	pconf := prod.newClient("Hemhjälpen AI", false)
	resp, body = prod.browser().get("/oauth/sign-in?" + authzQuery(pconf.ClientID).Encode())
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "signin_not_configured") {
		t.Fatalf("production without a sender: %d\n%s", resp.StatusCode, body)
	}
}

// TestBrowserSessionExpires: after 30 minutes the customer signs in again.
func TestBrowserSessionExpires(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Hemhjälpen AI", false)
	authURL := conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	b := e.browser()
	e.signIn(b, authURL, "session@example.se")
	if resp, _ := b.get(authURL); resp.StatusCode != http.StatusOK {
		t.Fatalf("signed in: %d, want the consent page", resp.StatusCode)
	}
	e.clock.Advance(oauth.SessionTTL)
	resp, body := b.get(authURL)
	if loc := expectRedirect(t, resp, body); !strings.HasPrefix(loc, "/oauth/sign-in?") {
		t.Fatalf("after the session: %q", loc)
	}
}

// cookieNamed returns the value of a cookie the browser holds for path.
func cookieNamed(t *testing.T, b *browser, path, name string) string {
	t.Helper()
	u, _ := url.Parse(b.base + path)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	t.Fatalf("the browser holds no cookie %s for %s", name, path)
	return ""
}
