package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/ratelimit"
)

// Site is one set of signed-in pages under a path prefix ("/provider"):
// its layout, browser and session cookies, page budget and sign-in door.
// T is the consumer's write transaction, in which a consumed sign-in code
// starts a session.
type Site[T CodeTx] struct {
	Prefix   string
	Layout   *Layout
	Browsers Browsers
	Sessions Sessions
	Codes    *Codes
	// Spend spends the limiter's budgets; Pages is the page budget per
	// client IP, SendLimits the sign-in code budgets.
	Spend      Spender
	Pages      ratelimit.Policy
	SendLimits SendLimits
	// Production without a code Sender answers the sign-in page with 503.
	Production bool
	// InTx runs fn in one write transaction of the consumer's store.
	InTx func(ctx context.Context, fn func(T) error) error
	// Admits reports whether the address may sign in: a code is sent only
	// then, and the page reads the same either way.
	Admits func(ctx context.Context, email string) (bool, error)
	// Begin signs the person with the address in, inside the transaction
	// that consumed their code, and stores the session under sessionHash;
	// false when they may no longer sign in.
	Begin func(ctx context.Context, tx T, email, sessionHash string, now time.Time) (bool, error)
	// End deletes the session stored under sessionHash (no error when
	// there is none).
	End func(ctx context.Context, sessionHash string) error
	// SignInIntro is the text key of the sign-in page's introduction.
	SignInIntro string
	// Multiline names the form fields (textareas) whose values may hold
	// line breaks.
	Multiline []string
	// LogName names the pages in the log lines of their internal errors
	// ("provider page").
	LogName string
	// Refusals are how the pages answer their use cases' refusals, first
	// match first (Refused).
	Refusals []Refusal
	cop      *http.CrossOriginProtection
}

// NewSite returns a site with its sign-in cookies and session cookie set
// for the base URL (Secure when https) under prefix, and its pages
// protected against cross-origin form posts.
func NewSite[T CodeTx](s Site[T], baseURL string, hasher *auth.Hasher, sessionTTL time.Duration) *Site[T] {
	cookies := Cookies{Secure: len(baseURL) > 8 && baseURL[:8] == "https://"}
	s.Browsers = Browsers{Hasher: hasher, Cookies: cookies, Path: s.Prefix}
	s.Sessions = Sessions{Hasher: hasher, Cookies: cookies, Name: "bokat" + cookieSuffix(s.Prefix) + "_session",
		Path: s.Prefix, Domain: "session" + s.Prefix, MaxAge: int(sessionTTL.Seconds())}
	s.cop = http.NewCrossOriginProtection()
	s.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Layout.RenderError(w, r, http.StatusForbidden, "err_csrf", "cross_origin_request")
	}))
	return &s
}

func cookieSuffix(prefix string) string {
	out := []byte{}
	for _, c := range []byte(prefix) {
		if c >= 'a' && c <= 'z' {
			out = append(out, c)
		} else if len(out) > 0 && out[len(out)-1] != '_' {
			out = append(out, '_')
		}
	}
	return "_" + string(out)
}

// Protect refuses cross-origin form posts to h (http.CrossOriginProtection).
func (s *Site[T]) Protect(h http.Handler) http.Handler { return s.cop.Handler(h) }

// Form admits a page request and reads its parameters: the query of a GET,
// or the CSRF-checked form of a POST. It spends the caller's page budget
// first (429 when spent), and refuses any parameter or path value that is
// not clean text with 400 before anything reaches the store. It answers the request itself
// and returns false when it cannot go on.
func (s *Site[T]) Form(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return nil, false
	}
	if wait := s.Spend(r.Context(), s.Pages, ratelimit.Caller(r.Context())); wait > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(ratelimit.CeilSeconds(wait)))
		s.Layout.RenderError(w, r, http.StatusTooManyRequests, "err_rate", "rate_limited")
		return nil, false
	}
	query := r.URL.Query()
	if !CleanParams(query) || !CleanPathValues(r) {
		s.Layout.RenderError(w, r, http.StatusBadRequest, "err_request", "invalid_request")
		return nil, false
	}
	if r.Method == http.MethodGet {
		return query, true
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.Layout.RenderError(w, r, http.StatusBadRequest, "err_request", "invalid_form")
		return nil, false
	}
	if !CleanParams(r.PostForm, s.Multiline...) {
		s.Layout.RenderError(w, r, http.StatusBadRequest, "err_request", "invalid_request")
		return nil, false
	}
	if !s.Browsers.CheckCSRF(r) {
		s.Layout.RenderError(w, r, http.StatusForbidden, "err_csrf", "invalid_csrf_token")
		return nil, false
	}
	return r.PostForm, true
}

// Page is Layout.Page with the form token of the request's browser.
func (s *Site[T]) Page(w http.ResponseWriter, r *http.Request, titleKey string) Page {
	p := s.Layout.Page(r, titleKey)
	p.CSRF = s.Browsers.CSRFToken(s.Browsers.ID(w, r))
	p.SignOutURL = s.Prefix + "/sign-out"
	return p
}

// SignInURL is the sign-in page in a language.
func (s *Site[T]) SignInURL(lang string) string { return Link(lang, s.Prefix+"/sign-in") }

// signInCookie holds the handle of the code being entered.
const signInCookie = "bokat_signin"

// SignInData is the data of the sign-in and code pages.
type SignInData struct {
	Intro, Email, Action, SignInURL string
	Dead                            bool
}

// SignIn serves GET and POST {prefix}/sign-in: the e-mail form.
func (s *Site[T]) SignIn() http.Handler {
	return s.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.Form(w, r); !ok {
			return
		}
		if s.Codes.Sender == nil && s.Production {
			s.Layout.RenderError(w, r, http.StatusServiceUnavailable, "signin_unavailable", "signin_not_configured")
			return
		}
		p := s.Page(w, r, "signin_title")
		data := SignInData{Intro: p.T[s.SignInIntro], Action: s.Prefix + "/sign-in"}
		p.Data = data
		if r.Method == http.MethodGet {
			if r.URL.Query().Get("signed_out") == "1" {
				p.Notice = p.T["signed_out"]
			}
			s.Layout.Render(w, r, http.StatusOK, "signin", p)
			return
		}
		email, valid := NormalizeEmail(r.PostForm.Get("email"))
		if !valid {
			p.Error = p.T["bad_email"]
			s.Layout.Render(w, r, http.StatusBadRequest, "signin", p)
			return
		}
		data.Email = email
		p.Data = data
		if key, wait := s.Codes.Budget(r.Context(), s.Spend, s.SendLimits, email); wait > 0 {
			p.Error = p.T[key]
			w.Header().Set("Retry-After", fmt.Sprint(ratelimit.CeilSeconds(wait)))
			s.Layout.Render(w, r, http.StatusTooManyRequests, "signin", p)
			return
		}
		handle, err := s.sendCode(r.Context(), email, p.Lang, s.Browsers.ID(w, r))
		switch {
		case errors.Is(err, ErrSendLimit):
			p.Error = p.T["too_many_codes"]
			w.Header().Set("Retry-After", fmt.Sprint(ratelimit.CeilSeconds(SendWindow)))
			s.Layout.Render(w, r, http.StatusTooManyRequests, "signin", p)
			return
		case err != nil:
			s.Layout.log.ErrorContext(r.Context(), "send sign-in code", "error", err.Error())
			p.Error = p.T["send_failed"]
			s.Layout.Render(w, r, http.StatusServiceUnavailable, "signin", p)
			return
		}
		s.Browsers.Cookies.Set(w, signInCookie, handle, s.Prefix+"/sign-in", int(CodeTTL.Seconds()))
		http.Redirect(w, r, Link(p.Lang, s.Prefix+"/sign-in/code"), http.StatusSeeOther)
	}))
}

// sendCode sends a code when the address may sign in. Otherwise it stores
// a decoy that is never sent (Codes.Decoy), so that the pages read the
// same, attempt after attempt, whether or not the address has an account.
func (s *Site[T]) sendCode(ctx context.Context, email, lang, browser string) (string, error) {
	ok, err := s.Admits(ctx, email)
	if err != nil {
		return "", err
	}
	inTx := func(fn func(CodeTx) error) error {
		return s.InTx(ctx, func(tx T) error { return fn(tx) })
	}
	if !ok {
		return s.Codes.Decoy(ctx, inTx, email, browser)
	}
	return s.Codes.Send(ctx, inTx, email, lang, browser)
}

// SignInCode serves GET and POST {prefix}/sign-in/code: the code form.
// The right code starts a session and leads to the site's home.
func (s *Site[T]) SignInCode() http.Handler {
	return s.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.Form(w, r); !ok {
			return
		}
		p := s.Page(w, r, "code_title")
		data := SignInData{Action: s.Prefix + "/sign-in/code", SignInURL: s.Prefix + "/sign-in"}
		p.Data = data
		handle := CookieValue(r, signInCookie)
		if handle == "" {
			http.Redirect(w, r, s.SignInURL(p.Lang), http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodGet {
			s.Layout.Render(w, r, http.StatusOK, "code", p)
			return
		}
		token, left, err := s.checkCode(r.Context(), handle, s.Browsers.ID(w, r), r.PostForm.Get("code"))
		if err != nil {
			s.fail(w, r, "check sign-in code", err)
			return
		}
		switch {
		case token != "":
			s.Browsers.Cookies.Clear(w, signInCookie, s.Prefix+"/sign-in")
			s.Sessions.Start(w, token)
			http.Redirect(w, r, Link(p.Lang, s.Prefix+"/"), http.StatusSeeOther)
		case left > 0:
			p.Error = fmt.Sprintf(p.T["wrong_code"], left)
			s.Layout.Render(w, r, http.StatusBadRequest, "code", p)
		default:
			s.Browsers.Cookies.Clear(w, signInCookie, s.Prefix+"/sign-in")
			p.Error = p.T["code_dead"]
			data.Dead = true
			p.Data = data
			s.Layout.Render(w, r, http.StatusBadRequest, "code", p)
		}
	}))
}

// checkCode spends one attempt of the code and, when it matches, begins a
// session in the same transaction; a wrong attempt is committed too.
func (s *Site[T]) checkCode(ctx context.Context, handle, browser, code string) (token string, left int, err error) {
	now := s.Codes.Now()
	err = s.InTx(ctx, func(tx T) error {
		token, left = "", 0
		res, err := s.Codes.Check(ctx, tx, handle, browser, code)
		if err != nil || res.Email == "" {
			left = res.Left
			return err
		}
		t, hash := s.Sessions.New()
		ok, err := s.Begin(ctx, tx, res.Email, hash, now)
		if ok {
			token = t
		}
		return err
	})
	return token, left, err
}

// SignOut serves POST {prefix}/sign-out: it ends the session and leads to
// the sign-in page.
func (s *Site[T]) SignOut() http.Handler {
	return s.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.Form(w, r); !ok {
			return
		}
		if hash := s.Sessions.FromRequest(r); hash != "" {
			if err := s.End(r.Context(), hash); err != nil {
				s.fail(w, r, "end session", err)
				return
			}
		}
		s.Sessions.End(w)
		lang := Locale(r)
		target := s.Prefix + "/sign-in?signed_out=1"
		if lang == EN {
			target += "&lang=en"
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
	}))
}

// SpendOn returns the Spender of a limiter: nil or a policy that is off
// spends nothing, and a limiter that fails lets the request pass (fail
// open, as the API does) with a warning.
func SpendOn(l ratelimit.Limiter, log *slog.Logger) Spender {
	return func(ctx context.Context, p ratelimit.Policy, key string) time.Duration {
		if l == nil || !p.Enabled() {
			return 0
		}
		d, err := l.Allow(ctx, p, key)
		if err != nil {
			log.WarnContext(ctx, "rate limiter unavailable: page requests pass unchecked", "policy", p.Name, "error", err.Error())
			return 0
		}
		if d.Allowed {
			return 0
		}
		return max(d.RetryAfter, time.Second)
	}
}

// SignedIn admits a page request (Form) and finds the person its session
// belongs to with lookup (bokat.ErrNotFound: no such session); without a
// valid session it leads to the sign-in page, and another error of lookup
// is an internal error (Site.Fail, "read session"). It returns that person
// and the page with its form token, or false when the request has been
// answered.
func SignedIn[T CodeTx, U any](s *Site[T], w http.ResponseWriter, r *http.Request,
	lookup func(ctx context.Context, sessionHash string) (U, error)) (U, Page, bool) {
	var who U
	if _, ok := s.Form(w, r); !ok {
		return who, Page{}, false
	}
	err := bokat.ErrNotFound
	if hash := s.Sessions.FromRequest(r); hash != "" {
		who, err = lookup(r.Context(), hash)
	}
	if errors.Is(err, bokat.ErrNotFound) {
		http.Redirect(w, r, s.SignInURL(Locale(r)), http.StatusSeeOther)
		return who, Page{}, false
	}
	if err != nil {
		s.Fail(w, r, "read session", err)
		return who, Page{}, false
	}
	return who, s.Page(w, r, ""), true
}
