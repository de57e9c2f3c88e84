package oauth

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"bokat"
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
		"https://app.example.se/cb%00.evil.example":           false, // an encoded NUL
		"https://app.example.se/cb?next=%0d%0aSet-Cookie:x":   false, // encoded CR LF
		"https://app.example.se/cb?x=%7F":                     false,
		"https://app.example.se/cb?q=%20%C3%A5%2F":            true, // other escapes stay
		"https://app.example.se:0/cb":                         false,
		"http://127.0.0.1:0/cb":                               false,
		"https://app.example.se:00/cb":                        false,
		"https://app.example.se:65536/cb":                     false,
		"https://app.example.se:65535/cb":                     true,
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
		"http://127.0.0.1:0/callback":         false, // port 0 is no port
		"http://127.0.0.1:70000/callback":     false,
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
