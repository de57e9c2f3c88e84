package oauth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/oauth"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// fuzzRedirectURIs are the redirect URIs of the fuzz targets' client.
var fuzzRedirectURIs = []string{"https://app.example.se/cb", "http://127.0.0.1:8123/callback"}

// The fuzz targets' clients, the same on every engine.
const (
	fuzzConfidential = "oc_0190c0de00007000800000000000c0f1"
	fuzzSecret       = "bks_fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz"
	fuzzPublic       = "oc_0190c0de00007000800000000000b0b1"
)

// fuzzServers returns an authorization server for each engine the run
// covers (see sqlstoretest.Engines), each on a fresh store holding one
// confidential and one public client with the same ids on every engine.
func fuzzServers(tb testing.TB) []*oauth.Server {
	tb.Helper()
	h, err := auth.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		tb.Fatal(err)
	}
	engines := sqlstoretest.Engines()
	if len(engines) == 0 {
		tb.Fatal("no test engine selected: check BOKAT_TEST_ENGINES and " + sqlstoretest.PostgresURLEnv)
	}
	var out []*oauth.Server
	for _, engine := range engines {
		db := sqlstoretest.Open(tb, engine)
		s, err := oauth.New(oauth.Config{BaseURL: "https://api.bokat.example", Store: sqlstore.Bind[oauth.Tx](db), Hasher: h, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			tb.Fatal(err)
		}
		ctx, now := context.Background(), time.Now()
		for _, c := range []oauth.Client{
			{ID: fuzzConfidential, Name: "Appen", RedirectURIs: fuzzRedirectURIs, Scopes: bokat.AllScopes(), SecretHash: h.Hash(oauth.DomainClientSecret, fuzzSecret), CreatedAt: now},
			{ID: fuzzPublic, Name: "Mobil", RedirectURIs: fuzzRedirectURIs[1:], Scopes: []bokat.Scope{bokat.ScopeBookingsRead}, CreatedAt: now},
		} {
			if err := db.CreateOAuthClient(ctx, c); err != nil {
				tb.Fatal(err)
			}
		}
		out = append(out, s)
	}
	return out
}

// serveAll sends the request made by newRequest to every server and
// returns the first answer; the engines must answer alike (issue 11: both
// engines behave alike), byte for byte for JSON and by status and
// Location otherwise.
func serveAll(t *testing.T, servers []*oauth.Server, handler func(*oauth.Server) http.Handler, newRequest func() *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	var first *httptest.ResponseRecorder
	for i, s := range servers {
		w := httptest.NewRecorder()
		handler(s).ServeHTTP(w, newRequest())
		if first == nil {
			first = w
			continue
		}
		same := w.Code == first.Code && w.Header().Get("Location") == first.Header().Get("Location")
		if strings.HasPrefix(first.Header().Get("Content-Type"), "application/json") {
			same = same && w.Body.String() == first.Body.String()
		}
		if !same {
			t.Fatalf("engines answer differently: %d %s %s / engine %d: %d %s %s", first.Code, first.Header().Get("Location"), first.Body,
				i, w.Code, w.Header().Get("Location"), w.Body)
		}
	}
	return first
}

// rfc6749Text reports whether s uses only the characters RFC 6749 allows in
// error and error_description values (sections 4.1.2.1 and 5.2).
func rfc6749Text(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// TestSafeScopeNameKeepsRFC6749Characters: an echoed name may only use the
// characters RFC 6749 allows in error_description (found by FuzzAuthorizeQuery).
func TestSafeScopeNameKeepsRFC6749Characters(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"bookings:read":         "bookings:read",
		`admin"\`:               "admin??",
		"ä\x00\x7f":             "????", // ä is two bytes
		strings.Repeat("a", 61): strings.Repeat("a", 60) + "...",
	}
	for in, want := range cases {
		if got := oauth.SafeScopeName(in); got != want || !rfc6749Text(got) {
			t.Errorf("safeScopeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The OAuth fuzz targets send each request to a server on every engine the
// run covers (BOKAT_TEST_ENGINES, BOKAT_TEST_POSTGRES_URL) and require the
// same answer from each.

// FuzzTokenForm posts arbitrary forms, content types and Authorization
// headers to the token and revocation endpoints. Properties: they never
// panic; every refusal is an RFC 6749 section 5.2 error (RFC 7009 for
// revocation) as an uncacheable JSON object of error and error_description
// in the characters the RFC allows, 401 with WWW-Authenticate exactly for
// invalid_client; nothing is a server error; a revocation succeeds only for
// a client that authenticated.
func FuzzTokenForm(f *testing.F) {
	servers := fuzzServers(f)
	confidential, secret, public := fuzzConfidential, fuzzSecret, fuzzPublic
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(confidential)+":"+url.QueryEscape(secret)))
	form := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	const ct = "application/x-www-form-urlencoded"
	verifier := strings.Repeat("v", 43)
	// Seeds: the requests of the token and revocation tests.
	f.Add(uint8(0), ct, basic, form("grant_type", "authorization_code", "code", "bkc_unknown", "code_verifier", verifier, "redirect_uri", fuzzRedirectURIs[0]))
	f.Add(uint8(0), ct, "", form("grant_type", "authorization_code", "client_id", public, "code", "bkc_x", "code_verifier", verifier))
	f.Add(uint8(0), ct, "", form("grant_type", "refresh_token", "client_id", confidential, "client_secret", secret, "refresh_token", "bkr_x", "scope", "bookings:read"))
	f.Add(uint8(0), ct, basic, form("grant_type", "password", "username", "a", "password", "b"))
	f.Add(uint8(0), ct, basic, form("grant_type", "refresh_token", "grant_type", "refresh_token"))
	f.Add(uint8(0), ct, basic, form("client_id", "oc_other", "grant_type", "refresh_token"))
	f.Add(uint8(0), ct, basic, form("client_secret", secret))
	f.Add(uint8(0), "application/json", "", `{"grant_type":"refresh_token"}`)
	f.Add(uint8(0), ct, "Basic !!!", "grant_type=%zz")
	f.Add(uint8(0), ct, "", form("client_id", "\x00", "grant_type", "refresh_token"))
	f.Add(uint8(0), ct, basic, "%C3%A4%22=1&%C3%A4%22=2") // a repeated non-ASCII name was echoed as it was
	f.Add(uint8(1), ct, basic, form("token", "bkr_x", "token_type_hint", "refresh_token"))
	f.Add(uint8(1), ct, "", form("client_id", public, "token", "bka_x"))
	f.Add(uint8(1), ct, basic, form("token_type_hint", "access_token"))
	f.Add(uint8(1), ct, "", form("client_id", confidential, "client_secret", "bks_wrong", "token", "x"))
	codes := map[bool][]string{
		false: {"invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope"},
		true:  {"invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope", "unsupported_token_type"},
	}
	f.Fuzz(func(t *testing.T, endpoint uint8, contentType, authorization, body string) {
		revoke := endpoint%2 == 1
		handler, path := (*oauth.Server).Token, "/oauth/token"
		if revoke {
			handler, path = (*oauth.Server).Revoke, "/oauth/revoke"
		}
		newRequest := func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
			r.Header.Set("Content-Type", contentType)
			if authorization != "" {
				r.Header.Set("Authorization", authorization)
			}
			return r
		}
		w := serveAll(t, servers, handler, newRequest)
		r := newRequest()
		if w.Code >= 500 {
			t.Fatalf("%s answered %d: %s", path, w.Code, w.Body)
		}
		if w.Code == http.StatusOK {
			if !revoke {
				t.Fatalf("the token endpoint issued tokens to a fuzzed request: %s", w.Body)
			}
			// Only an authenticated client may revoke.
			vals, _ := url.ParseQuery(body)
			id, pw, ok := r.BasicAuth()
			if ok {
				id, _ = url.QueryUnescape(id)
				pw, _ = url.QueryUnescape(pw)
			} else {
				id, pw = vals.Get("client_id"), vals.Get("client_secret")
			}
			if !(id == confidential && pw == secret) && !(id == public && pw == "") {
				t.Fatalf("revocation by client %q accepted without its credentials", id)
			}
			return
		}
		if w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("%s error answered with headers %v", path, w.Header())
		}
		var e map[string]string
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || len(e) != 2 {
			t.Fatalf("%s error body %s is not {error, error_description}: %v", path, w.Body, err)
		}
		code, desc := e["error"], e["error_description"]
		switch {
		case !slices.Contains(codes[revoke], code):
			t.Fatalf("%s answered error %q, not one of RFC 6749 5.2", path, code)
		case desc == "" || !rfc6749Text(desc):
			t.Fatalf("%s error_description %q is empty or uses characters RFC 6749 5.2 forbids", path, desc)
		case (w.Code == http.StatusUnauthorized) != (code == "invalid_client"):
			t.Fatalf("%s answered %d %s; invalid_client is 401 and only it", path, w.Code, code)
		case w.Code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "":
			t.Fatalf("%s answered 401 without WWW-Authenticate", path)
		case w.Code != http.StatusUnauthorized && w.Code != http.StatusBadRequest:
			t.Fatalf("%s answered %d %s", path, w.Code, code)
		}
	})
}

// FuzzAuthorizeQuery sends arbitrary authorization requests (GET query
// strings) without a session. Properties: it never panics and never fails
// with a server error; it redirects only to a redirect URI the client
// registered (with an RFC 6749 4.1.2.1 error, the issuer and the request's
// state) or to the sign-in page on this origin; anything else is an error
// page.
func FuzzAuthorizeQuery(f *testing.F) {
	servers := fuzzServers(f)
	confidential, public := fuzzConfidential, fuzzPublic
	challenge := strings.Repeat("c", 43)
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	valid := []string{"response_type", "code", "client_id", confidential, "redirect_uri", fuzzRedirectURIs[0],
		"code_challenge", challenge, "code_challenge_method", "S256", "scope", "bookings:read bookings:confirm", "state", "xyz"}
	// Seeds: the authorization requests of the OAuth tests, valid and broken.
	f.Add(q(valid...))
	f.Add(q("response_type", "code", "client_id", public, "code_challenge", challenge, "code_challenge_method", "S256", "state", "s"))
	f.Add(q("response_type", "code", "client_id", public, "redirect_uri", "http://127.0.0.1:50000/callback", "code_challenge", challenge, "code_challenge_method", "plain"))
	f.Add(q("response_type", "token", "client_id", confidential, "redirect_uri", fuzzRedirectURIs[1], "state", "a b"))
	f.Add(q("response_type", "code", "client_id", confidential, "code_challenge", challenge, "code_challenge_method", "S256"))
	f.Add(q("response_type", "code", "client_id", confidential, "redirect_uri", "https://evil.example/cb"))
	f.Add(q("response_type", "code", "client_id", confidential, "redirect_uri", fuzzRedirectURIs[0], "code_challenge", challenge, "code_challenge_method", "S256", "scope", "admin\x7f\""))
	f.Add(q("client_id", confidential, "client_id", public))
	f.Add(q("client_id", "oc_unknown"))
	f.Add("client_id=%00&redirect_uri=%zz")
	f.Add("")
	f.Fuzz(func(t *testing.T, query string) {
		newRequest := func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, "/oauth/authorize", nil)
			r.URL.RawQuery = query
			return r
		}
		w := serveAll(t, servers, (*oauth.Server).Authorize, newRequest)
		r := newRequest()
		switch w.Code {
		case http.StatusBadRequest:
			if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
				t.Fatalf("error page with Content-Type %q", w.Header().Get("Content-Type"))
			}
		case http.StatusSeeOther:
			if loc := w.Header().Get("Location"); !strings.HasPrefix(loc, "/oauth/sign-in?") {
				t.Fatalf("a request without a session was sent to %q, not the sign-in page", loc)
			}
		case http.StatusFound:
			checkErrorRedirect(t, servers[0], r.URL.Query(), w.Header().Get("Location"))
		default:
			t.Fatalf("authorize answered %d: %s", w.Code, w.Body)
		}
	})
}

// checkErrorRedirect asserts that an error redirect goes to a registered
// redirect URI and carries what RFC 6749 4.1.2.1 and RFC 9207 ask for.
func checkErrorRedirect(t *testing.T, s *oauth.Server, req url.Values, loc string) {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatalf("redirect to %q: %v", loc, err)
	}
	target := *u
	target.RawQuery = ""
	if target.Hostname() == "127.0.0.1" {
		target.Host = "127.0.0.1:8123" // RFC 8252 7.3: any port on a loopback redirect URI
	}
	if !slices.Contains(fuzzRedirectURIs, target.String()) {
		t.Fatalf("redirect to %q, which the client did not register", loc)
	}
	got := u.Query()
	code, desc := got.Get("error"), got.Get("error_description")
	switch {
	case !slices.Contains([]string{"invalid_request", "unauthorized_client", "access_denied", "unsupported_response_type",
		"invalid_scope", "server_error", "temporarily_unavailable"}, code):
		t.Fatalf("redirect %q: error %q is not one of RFC 6749 4.1.2.1", loc, code)
	case !rfc6749Text(desc):
		t.Fatalf("redirect %q: error_description %q uses characters RFC 6749 4.1.2.1 forbids", loc, desc)
	case got.Get("iss") != oauth.IssuerOf(s):
		t.Fatalf("redirect %q: iss %q, want %q", loc, got.Get("iss"), oauth.IssuerOf(s))
	case got.Has("code"):
		t.Fatalf("redirect %q carries a code without a session", loc)
	}
	if states, ok := req["state"]; ok && got.Get("state") != states[0] {
		t.Fatalf("redirect %q: state %q, want %q", loc, got.Get("state"), states[0])
	}
}
