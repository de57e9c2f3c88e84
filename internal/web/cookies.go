package web

import (
	"crypto/subtle"
	"net/http"

	"bokat/internal/auth"
)

// Cookies sets Bokat's browser cookies: all HttpOnly, SameSite=Lax, and
// Secure when the service's base URL is https. None is readable by scripts
// or sent on cross-site subrequests.
type Cookies struct {
	Secure bool
}

// Set sets a cookie; maxAge 0 makes it last for the browser session.
func (c Cookies) Set(w http.ResponseWriter, name, value, path string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: path, MaxAge: maxAge,
		HttpOnly: true, Secure: c.Secure, SameSite: http.SameSiteLaxMode,
	})
}

// Clear deletes a cookie.
func (c Cookies) Clear(w http.ResponseWriter, name, path string) {
	c.Set(w, name, "", path, -1)
}

// CookieValue returns the value of a cookie Bokat set (a random secret of
// 20 to 100 characters), or "" when the request has none that fits.
func CookieValue(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil || len(c.Value) < 20 || len(c.Value) > 100 {
		return ""
	}
	return c.Value
}

// BrowserCookie is the name of the random id cookie every form's CSRF
// token is derived from.
const BrowserCookie = "bokat_browser"

// domainCSRF is the hash domain of CSRF tokens.
const domainCSRF = "csrf"

// Browsers identifies browsers by a random id cookie on Path and derives
// their forms' CSRF tokens from it: a keyed hash of the id (a signed
// double-submit token; the pepper keys it).
type Browsers struct {
	Hasher  *auth.Hasher
	Cookies Cookies
	// Path is the cookie's path: the pages that share it.
	Path string
}

// ID returns the browser's id cookie, setting a fresh one when it has
// none; later reads in the same request see the new one.
func (b Browsers) ID(w http.ResponseWriter, r *http.Request) string {
	if v := CookieValue(r, BrowserCookie); v != "" {
		return v
	}
	v := auth.NewSecret("")
	b.Cookies.Set(w, BrowserCookie, v, b.Path, 0)
	r.AddCookie(&http.Cookie{Name: BrowserCookie, Value: v})
	return v
}

// CSRFToken is the form token of a browser id.
func (b Browsers) CSRFToken(browser string) string {
	return b.Hasher.Hash(domainCSRF, browser)
}

// CheckCSRF reports whether a form POST carries the token of its browser
// in the csrf_token field.
func (b Browsers) CheckCSRF(r *http.Request) bool {
	browser := CookieValue(r, BrowserCookie)
	got := r.PostFormValue("csrf_token")
	if browser == "" || got == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(b.CSRFToken(browser))) == 1
}

// Sessions are signed-in browser sessions: a random token in a cookie,
// stored by the consumer under its keyed hash in Domain.
type Sessions struct {
	Hasher  *auth.Hasher
	Cookies Cookies
	// Name and Path of the cookie; Domain of the token's keyed hash.
	Name, Path, Domain string
	// MaxAge is the cookie's lifetime in seconds.
	MaxAge int
}

// New returns a fresh session token and the keyed hash to store.
func (s Sessions) New() (token, hash string) {
	token = auth.NewSecret("")
	return token, s.Hash(token)
}

// Hash returns the keyed hash of a session token.
func (s Sessions) Hash(token string) string { return s.Hasher.Hash(s.Domain, token) }

// FromRequest returns the keyed hash of the request's session token, or ""
// when it carries none.
func (s Sessions) FromRequest(r *http.Request) string {
	if t := CookieValue(r, s.Name); t != "" {
		return s.Hash(t)
	}
	return ""
}

// Start sets the session cookie.
func (s Sessions) Start(w http.ResponseWriter, token string) {
	s.Cookies.Set(w, s.Name, token, s.Path, s.MaxAge)
}

// End deletes the session cookie.
func (s Sessions) End(w http.ResponseWriter) { s.Cookies.Clear(w, s.Name, s.Path) }
