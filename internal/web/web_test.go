package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"bokat/internal/auth"
)

func TestLinkKeepsEnglishOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ lang, path, want string }{
		{SV, "/provider/bookings", "/provider/bookings"},
		{EN, "/provider/bookings", "/provider/bookings?lang=en"},
		{EN, "/provider/bookings?view=past", "/provider/bookings?lang=en&view=past"},
		{EN, "/provider/bookings?lang=sv", "/provider/bookings?lang=en"},
	} {
		if got := Link(tc.lang, tc.path); got != tc.want {
			t.Errorf("Link(%s, %s) = %s, want %s", tc.lang, tc.path, got, tc.want)
		}
	}
}

func TestCSRFTokenIsBoundToTheBrowser(t *testing.T) {
	t.Parallel()
	hasher, err := auth.NewHasher([]byte("web-test-pepper-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	b := Browsers{Hasher: hasher, Path: "/provider"}
	rec := httptest.NewRecorder()
	first := httptest.NewRequest("GET", "/provider/", nil)
	id := b.ID(rec, first)
	if id == "" || b.ID(rec, first) != id {
		t.Fatal("a browser id is not kept for the rest of the request")
	}
	post := func(browser, token string) bool {
		form := url.Values{"csrf_token": {token}}
		r := httptest.NewRequest("POST", "/provider/x", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if browser != "" {
			r.AddCookie(&http.Cookie{Name: BrowserCookie, Value: browser})
		}
		return b.CheckCSRF(r)
	}
	other := auth.NewSecret("")
	for name, tc := range map[string]struct {
		browser, token string
		want           bool
	}{
		"own token":           {id, b.CSRFToken(id), true},
		"another's token":     {id, b.CSRFToken(other), false},
		"no browser cookie":   {"", b.CSRFToken(id), false},
		"no token":            {id, "", false},
		"the browser id only": {id, id, false},
	} {
		if got := post(tc.browser, tc.token); got != tc.want {
			t.Errorf("%s: CheckCSRF = %v, want %v", name, got, tc.want)
		}
	}
}

func TestLayoutIsAccessibleAndStrict(t *testing.T) {
	t.Parallel()
	l, err := NewLayout("/provider/static/site.css", "/provider/", Texts{SV: {"x": "Rubrik"}, EN: {"x": "Heading"}},
		map[string]string{"x": `{{define "content"}}<p>{{.Data}}</p>{{end}}`}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ target, lang, title, other string }{
		{"/provider/x", "sv", "Rubrik", "English"},
		{"/provider/x?lang=en", "en", "Heading", "Svenska"},
	} {
		r := httptest.NewRequest("GET", tc.target, nil)
		rec := httptest.NewRecorder()
		p := l.Page(r, "x")
		p.Data = "<script>alert(1)</script>"
		p.SignedIn = "a@example.se"
		l.Render(rec, r, http.StatusOK, "x", p)
		body := rec.Body.String()
		if got := rec.Header().Get("Content-Security-Policy"); got != ContentSecurityPolicy {
			t.Errorf("CSP %q", got)
		}
		for _, want := range []string{`<html lang="` + tc.lang + `">`, `<a class="skip" href="#main">`, `<main id="main"`,
			"<h1>" + tc.title + "</h1>", `<link rel="stylesheet" href="/provider/static/site.css">`, tc.other,
			"&lt;script&gt;", `name="csrf_token"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: page lacks %q:\n%s", tc.target, want, body)
			}
		}
		for _, banned := range []string{"<script", "<style", "style=", "http://", "https://"} {
			if strings.Contains(body, banned) {
				t.Errorf("%s: page holds %q", tc.target, banned)
			}
		}
	}
	for _, d := range []string{"default-src 'none'", "style-src 'self'", "img-src 'self'", "form-action 'self'",
		"frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, d) {
			t.Errorf("CSP lacks %s", d)
		}
	}
	if strings.Contains(ContentSecurityPolicy, "script-src") || strings.Contains(ContentSecurityPolicy, "unsafe") {
		t.Errorf("CSP allows scripts or unsafe sources: %s", ContentSecurityPolicy)
	}
}

func TestSiteCookiesAreHttpOnlySameSiteAndSecureOnHTTPS(t *testing.T) {
	t.Parallel()
	hasher, err := auth.NewHasher([]byte("web-test-pepper-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		base   string
		secure bool
	}{{"https://api.example.se", true}, {"http://127.0.0.1:8080", false}} {
		s := NewSite(Site[CodeTx]{Prefix: "/provider"}, tc.base, hasher, time.Hour)
		rec := httptest.NewRecorder()
		s.Browsers.ID(rec, httptest.NewRequest("GET", "/provider/", nil))
		token, hash := s.Sessions.New()
		s.Sessions.Start(rec, token)
		cookies := rec.Result().Cookies()
		if len(cookies) != 2 {
			t.Fatalf("%s: cookies %v", tc.base, cookies)
		}
		for _, c := range cookies {
			if !c.HttpOnly || c.Secure != tc.secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/provider" {
				t.Errorf("%s: cookie %s: HttpOnly %v Secure %v SameSite %v Path %s", tc.base, c.Name, c.HttpOnly, c.Secure,
					c.SameSite, c.Path)
			}
		}
		if cookies[1].Name != "bokat_provider_session" || cookies[1].MaxAge != 3600 || hash == token || s.Sessions.Hash(token) != hash {
			t.Errorf("%s: session cookie %+v; the stored hash must be the keyed hash of the token", tc.base, cookies[1])
		}
	}
}
