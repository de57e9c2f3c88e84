package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

func TestValidateRedirectURI(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"https://app.example.se/oauth/callback":               true,
		"https://app.example.se:8443/cb?tenant=1":             true,
		"http://127.0.0.1:8123/callback":                      true,
		"http://127.0.0.1/callback":                           true,
		"http://[::1]:9000/cb":                                true,
		"http://localhost:3000/cb":                            true,
		"http://app.example.se/cb":                            false, // plain http off loopback
		"http://192.168.1.10/cb":                              false,
		"https://app.example.se/cb#fragment":                  false,
		"https://user:pw@app.example.se/cb":                   false,
		"/relative/callback":                                  false,
		"com.example.app:/oauth2redirect":                     false, // private-use schemes are not offered
		"javascript:alert(1)":                                 false,
		"https://app.example.se/c b":                          false,
		"ftp://app.example.se/cb":                             false,
		"":                                                    false,
		"https://":                                            false,
		"https://app.example.se/" + strings.Repeat("a", 2000): false,
	}
	for uri, ok := range cases {
		err := ValidateRedirectURI(uri)
		if (err == nil) != ok {
			t.Errorf("ValidateRedirectURI(%q) = %v, want ok=%v", uri, err, ok)
		}
		if err != nil && bokat.ErrorCode(err) != bokat.CodeValidationFailed {
			t.Errorf("ValidateRedirectURI(%q) code = %s", uri, bokat.ErrorCode(err))
		}
	}
}

func TestMatchRedirectURI(t *testing.T) {
	t.Parallel()
	registered := []string{"https://app.example.se/cb", "http://127.0.0.1:8123/callback", "http://[::1]/cb?x=1"}
	cases := map[string]bool{
		"https://app.example.se/cb":           true,
		"https://app.example.se/cb/":          false,
		"https://APP.example.se/cb":           false, // exact string match, no normalisation
		"https://app.example.se:443/cb":       false,
		"https://app.example.se/cb?x=1":       false,
		"http://127.0.0.1:8123/callback":      true,
		"http://127.0.0.1:50000/callback":     true, // RFC 8252 7.3: any port on loopback
		"http://127.0.0.1/callback":           true,
		"http://127.0.0.1:8123/callback2":     false,
		"http://127.0.0.1:8123/callback?a=b":  false,
		"http://localhost:8123/callback":      false, // another host
		"https://127.0.0.1:8123/callback":     false,
		"http://[::1]:7000/cb?x=1":            true,
		"http://[::1]:7000/cb":                false,
		"http://user@127.0.0.1:8123/callback": false,
	}
	for uri, want := range cases {
		if got := matchRedirectURI(registered, uri); got != want {
			t.Errorf("matchRedirectURI(%q) = %v, want %v", uri, got, want)
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"kund@example.se":                        "kund@example.se",
		"  Kund.Namn+tag@Example.SE  ":           "kund.namn+tag@example.se",
		"":                                       "",
		"not-an-address":                         "",
		"Namn <namn@example.se>":                 "",
		"<namn@example.se>":                      "",
		"a@b":                                    "",
		"a@.example.se":                          "",
		"a@example.se.":                          "",
		"a@@example.se":                          "",
		"a b@example.se":                         "",
		`"a b"@example.se`:                       "",
		strings.Repeat("a", 250) + "@example.se": "",
	}
	for in, want := range cases {
		got, ok := normalizeEmail(in)
		if got != want || ok != (want != "") {
			t.Errorf("normalizeEmail(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestLocaleOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, query, accept, want string
	}{
		{"nothing", "", "", "sv"},
		{"lang=en", "lang=en", "sv", "en"},
		{"lang=sv", "lang=sv", "en", "sv"},
		{"unknown lang falls back", "lang=fi", "en-US", "en"},
		{"ui_locales", "ui_locales=de+en", "", "en"},
		{"English first", "", "en-US,en;q=0.9,sv;q=0.8", "en"},
		{"Swedish first", "", "sv-SE,sv;q=0.9,en;q=0.8", "sv"},
		{"neither", "", "de-DE,fr;q=0.8", "sv"},
		{"garbage", "", ";;;", "sv"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/oauth/sign-in?"+tc.query, nil)
		if tc.accept != "" {
			r.Header.Set("Accept-Language", tc.accept)
		}
		if got := localeOf(r); got != tc.want {
			t.Errorf("%s: localeOf = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestEveryScopeAndTextIsTranslated(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{localeSV, localeEN} {
		for _, s := range bokat.AllScopes() {
			if scopeTexts[lang][s] == "" {
				t.Errorf("%s: no text for scope %s", lang, s)
			}
		}
		for key := range texts[localeSV] {
			if texts[lang][key] == "" {
				t.Errorf("%s: no text %q", lang, key)
			}
		}
	}
}

// TestS256MatchesRFC7636 checks the transform against RFC 7636 appendix B.
func TestS256MatchesRFC7636(t *testing.T) {
	t.Parallel()
	if got := s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"); got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Fatalf("s256 = %s", got)
	}
}

func TestRandomDigits(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		d, err := randomDigits(SignInCodeDigits)
		if err != nil || !regexp.MustCompile(`^[0-9]{8}$`).MatchString(d) {
			t.Fatalf("randomDigits = %q, %v", d, err)
		}
		seen[d] = true
	}
	if len(seen) < 195 {
		t.Fatalf("only %d distinct codes in 200", len(seen))
	}
}

func TestContentSecurityPolicyAllowsExactlyThePageStyle(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte(pageCSS))
	want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if !strings.Contains(contentSecurityPolicy, want) || strings.Contains(contentSecurityPolicy, "unsafe") ||
		strings.Contains(contentSecurityPolicy, "script-src") {
		t.Fatalf("CSP = %s", contentSecurityPolicy)
	}
	if !strings.Contains(layoutHTML, "<style>"+pageCSS+"</style>") {
		t.Fatal("the style block is not exactly pageCSS")
	}
}

func testServer(t *testing.T, baseURL string) (*Server, *sqlstore.DB) {
	t.Helper()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	h, err := auth.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{BaseURL: baseURL, Store: db, Hasher: h, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s, db
}

func TestCookiesAreSecureOnHTTPS(t *testing.T) {
	t.Parallel()
	for base, secure := range map[string]bool{"https://api.bokat.se": true, "http://127.0.0.1:8080": false} {
		s, _ := testServer(t, base)
		w := httptest.NewRecorder()
		s.browserID(w, httptest.NewRequest("GET", "/oauth/sign-in", nil))
		cookies := w.Result().Cookies()
		if len(cookies) != 1 || cookies[0].Secure != secure || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteLaxMode {
			t.Errorf("%s: cookies %+v, want one HttpOnly Lax cookie with Secure=%v", base, cookies, secure)
		}
	}
}

func TestVerifyAccessTokenRefusesOtherTokens(t *testing.T) {
	t.Parallel()
	s, _ := testServer(t, "http://127.0.0.1:8080")
	for _, tok := range []string{"", "bkp_partner", "bkr_refresh", "bka_unknown", "bka_" + strings.Repeat("a", 300)} {
		if _, err := s.VerifyAccessToken(context.Background(), tok); !errors.Is(err, auth.ErrInvalidCredential) {
			t.Errorf("VerifyAccessToken(%.20q) = %v, want ErrInvalidCredential", tok, err)
		}
	}
}

func TestCreateClientValidatesAndHashesTheSecret(t *testing.T) {
	t.Parallel()
	s, db := testServer(t, "http://127.0.0.1:8080")
	ctx := context.Background()
	bad := []ClientSpec{
		{Name: "", RedirectURIs: []string{"https://a.example/cb"}, Scopes: bokat.AllScopes()},
		{Name: "A", Scopes: bokat.AllScopes()},
		{Name: "A", RedirectURIs: []string{"http://a.example/cb"}, Scopes: bokat.AllScopes()},
		{Name: "A", RedirectURIs: []string{"https://a.example/cb"}},
	}
	for _, spec := range bad {
		if _, _, err := CreateClient(ctx, db, s.hasher, spec, time.Now()); bokat.ErrorCode(err) != bokat.CodeValidationFailed {
			t.Errorf("CreateClient(%+v) = %v, want validation_failed", spec, err)
		}
	}
	id, secret, err := CreateClient(ctx, db, s.hasher, ClientSpec{Name: " Appen ", RedirectURIs: []string{"https://a.example/cb", "https://a.example/cb"}, Scopes: []bokat.Scope{bokat.ScopeBookingsRead}}, time.Now())
	if err != nil || !regexp.MustCompile(`^oc_[0-9a-f]{32}$`).MatchString(id) || !regexp.MustCompile(`^bks_[A-Za-z0-9_-]{43}$`).MatchString(secret) {
		t.Fatalf("CreateClient = %q, %q, %v", id, secret, err)
	}
	c, err := db.OAuthClient(ctx, id)
	if err != nil || c.Name != "Appen" || c.Public() || c.SecretHash == secret || len(c.RedirectURIs) != 1 {
		t.Fatalf("stored client %+v, %v", c, err)
	}
	pid, psecret, err := CreateClient(ctx, db, s.hasher, ClientSpec{Name: "Mobil", RedirectURIs: []string{"http://127.0.0.1/cb"}, Scopes: bokat.AllScopes(), Public: true}, time.Now())
	if err != nil || psecret != "" {
		t.Fatalf("public client: %q %v", psecret, err)
	}
	if c, err := db.OAuthClient(ctx, pid); err != nil || !c.Public() {
		t.Fatalf("public client stored as %+v, %v", c, err)
	}
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
		if got := safeScopeName(in); got != want || !rfc6749Text(got) {
			t.Errorf("safeScopeName(%q) = %q, want %q", in, got, want)
		}
	}
}
