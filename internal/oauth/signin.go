package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/ratelimit"
	"bokat/internal/web"
)

// Sign-in: the customer enters an e-mail address, receives a one-time code
// of SignInCodeDigits digits (valid SignInCodeTTL, SignInAttempts tries, at
// most SignInSendLimit codes per address per SignInSendWindow) and enters
// it in the same browser. Success starts a browser session of SessionTTL.
// Users are identified by their normalised e-mail address and get a stable
// id on their first sign-in.

// session returns the signed-in user of the request's browser session, or
// empty strings when there is none.
func (s *Server) session(r *http.Request) (userID, email string, err error) {
	token := cookieValue(r, cookieSession)
	if token == "" {
		return "", "", nil
	}
	userID, email, err = s.store.Session(r.Context(), s.hasher.Hash(domainSession, token), s.now())
	if errors.Is(err, bokat.ErrNotFound) {
		return "", "", nil
	}
	return userID, email, err
}

// pageForm admits a page request and reads its parameters: the query of a
// GET, or the CSRF-checked form of a POST. It spends the caller's page
// budget first (429 when spent), and refuses any parameter that is not
// clean text (bokat.CheckText: invalid UTF-8 or a control character) with
// 400 before anything reaches the store. It answers the request itself and
// returns false when it cannot go on.
func (s *Server) pageForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return nil, false
	}
	if wait := s.spend(r.Context(), s.limits.Pages, ratelimit.Caller(r.Context())); wait > 0 {
		setRetryAfter(w, wait)
		s.renderError(w, r, http.StatusTooManyRequests, "err_rate", "rate_limited")
		return nil, false
	}
	query := r.URL.Query()
	if !cleanParams(query) {
		s.renderError(w, r, http.StatusBadRequest, "err_request", "invalid_request")
		return nil, false
	}
	if r.Method == http.MethodGet {
		return query, true
	}
	if err := r.ParseForm(); err != nil {
		s.renderError(w, r, http.StatusBadRequest, "err_request", "invalid_form")
		return nil, false
	}
	if !cleanParams(r.PostForm) {
		s.renderError(w, r, http.StatusBadRequest, "err_request", "invalid_request")
		return nil, false
	}
	if !s.checkCSRF(r) {
		s.renderError(w, r, http.StatusForbidden, "err_csrf", "invalid_csrf_token")
		return nil, false
	}
	return r.PostForm, true
}

// cleanParams reports whether every parameter is clean, single-line text.
var cleanParams = web.CleanParams

func (s *Server) handleSignIn(w http.ResponseWriter, r *http.Request) {
	params, ok := s.pageForm(w, r)
	if !ok {
		return
	}
	req, aerr := s.parseAuthorize(r.Context(), params)
	if aerr != nil {
		s.redirectError(w, r, req, aerr)
		return
	}
	if s.sender == nil && s.production {
		s.renderClientError(w, r, req, http.StatusServiceUnavailable, "signin_unavailable", "signin_not_configured")
		return
	}
	p := newPage(r, "signin_title")
	browser := s.browserID(w, r)
	p.CSRF = s.csrfToken(browser)
	p.Hidden = hiddenFields(req.params)
	p.setClient(req)
	if r.Method == http.MethodGet {
		s.render(w, r, http.StatusOK, "signin", p)
		return
	}
	email, valid := normalizeEmail(r.PostForm.Get("email"))
	if !valid {
		p.Error = p.T["bad_email"]
		s.render(w, r, http.StatusBadRequest, "signin", p)
		return
	}
	p.Email = email
	if key, wait := s.sendBudget(r.Context(), email); wait > 0 {
		p.Error = p.T[key]
		setRetryAfter(w, wait)
		s.render(w, r, http.StatusTooManyRequests, "signin", p)
		return
	}
	handle, err := s.sendCode(r.Context(), email, p.Lang, browser)
	switch {
	case errors.Is(err, web.ErrSendLimit):
		p.Error = p.T["too_many_codes"]
		setRetryAfter(w, SignInSendWindow)
		s.render(w, r, http.StatusTooManyRequests, "signin", p)
		return
	case err != nil:
		s.log.ErrorContext(r.Context(), "send sign-in code", "error", err.Error())
		p.Error = p.T["send_failed"]
		s.render(w, r, http.StatusServiceUnavailable, "signin", p)
		return
	}
	s.setCookie(w, cookieSignIn, handle, "/oauth/sign-in", int(SignInCodeTTL.Seconds()))
	http.Redirect(w, r, "/oauth/sign-in/code?"+withLang(req.params, p.Lang), http.StatusSeeOther)
}

// sendBudget spends one code of the caller's sign-in budgets
// (web.Codes.Budget). Because the per-address budget is kept per requesting
// IP, requests from one address never spend the codes a user asks for from
// another; the store's bound (SignInSendLimit from anywhere) caps the mail
// one address can receive.
func (s *Server) sendBudget(ctx context.Context, email string) (string, time.Duration) {
	return s.codes.Budget(ctx, s.spend, web.SendLimits{IP: s.limits.SignInIP, Address: s.limits.SignInAddress,
		Global: s.limits.SignInGlobal}, email)
}

// sendCode creates a sign-in code for the address, bound to the browser,
// and sends it. It returns the handle the browser keeps in a cookie.
func (s *Server) sendCode(ctx context.Context, email, lang, browser string) (string, error) {
	return s.codes.Send(ctx, func(fn func(web.CodeTx) error) error {
		return s.store.InTx(ctx, func(tx Tx) error { return fn(tx) })
	}, email, lang, browser)
}

func (s *Server) handleSignInCode(w http.ResponseWriter, r *http.Request) {
	params, ok := s.pageForm(w, r)
	if !ok {
		return
	}
	req, aerr := s.parseAuthorize(r.Context(), params)
	if aerr != nil {
		s.redirectError(w, r, req, aerr)
		return
	}
	p := newPage(r, "code_title")
	browser := s.browserID(w, r)
	p.CSRF = s.csrfToken(browser)
	p.Hidden = hiddenFields(req.params)
	p.setClient(req)
	p.SignInURL = "/oauth/sign-in?" + withLang(req.params, p.Lang)
	handle := cookieValue(r, cookieSignIn)
	if handle == "" {
		http.Redirect(w, r, p.SignInURL, http.StatusSeeOther)
		return
	}
	if r.Method == http.MethodGet {
		s.render(w, r, http.StatusOK, "code", p)
		return
	}
	res, err := s.checkCode(r.Context(), handle, browser, normalizeCode(r.PostForm.Get("code")))
	if err != nil {
		s.log.ErrorContext(r.Context(), "check sign-in code", "error", err.Error())
		s.renderClientError(w, r, req, http.StatusServiceUnavailable, "err_internal", "server_error")
		return
	}
	switch {
	case res.session != "":
		s.clearCookie(w, cookieSignIn, "/oauth/sign-in")
		s.setCookie(w, cookieSession, res.session, "/oauth", int(SessionTTL.Seconds()))
		http.Redirect(w, r, "/oauth/authorize?"+withLang(req.params, p.Lang), http.StatusSeeOther)
	case res.left > 0:
		p.Error = fmt.Sprintf(p.T["wrong_code"], res.left)
		s.render(w, r, http.StatusBadRequest, "code", p)
	default:
		s.clearCookie(w, cookieSignIn, "/oauth/sign-in")
		p.Error = p.T["code_dead"]
		p.Dead = true
		s.render(w, r, http.StatusBadRequest, "code", p)
	}
}

// codeCheck is the outcome of one sign-in code attempt: a session token on
// success, else how many attempts are left (0: the code is dead).
type codeCheck struct {
	session string
	left    int
}

// checkCode spends one attempt of the code and, when the code and the
// browser match, consumes it, signs the user in (creating them on first
// sign-in) and starts a session. A wrong attempt is committed too.
func (s *Server) checkCode(ctx context.Context, handle, browser, code string) (codeCheck, error) {
	var out codeCheck
	now := s.now()
	err := s.store.InTx(ctx, func(tx Tx) error {
		out = codeCheck{}
		res, err := s.codes.Check(ctx, tx, handle, browser, code)
		if err != nil || res.Email == "" {
			out.left = res.Left
			return err
		}
		uid, err := uuid.NewV7()
		if err != nil {
			return err
		}
		userID, err := tx.SignInUser(ctx, UserIDPrefix+strings.ReplaceAll(uid.String(), "-", ""), res.Email, now)
		if err != nil {
			return err
		}
		token := auth.NewSecret("")
		if err := tx.InsertSession(ctx, s.hasher.Hash(domainSession, token), userID, now, now.Add(SessionTTL)); err != nil {
			return err
		}
		out.session = token
		return nil
	})
	return out, err
}

func (s *Server) handleSignOut(w http.ResponseWriter, r *http.Request) {
	params, ok := s.pageForm(w, r)
	if !ok {
		return
	}
	if token := cookieValue(r, cookieSession); token != "" {
		if err := s.store.DeleteSession(r.Context(), s.hasher.Hash(domainSession, token)); err != nil {
			s.log.ErrorContext(r.Context(), "end session", "error", err.Error())
			s.renderError(w, r, http.StatusServiceUnavailable, "err_internal", "server_error")
			return
		}
	}
	s.clearCookie(w, cookieSession, "/oauth")
	req, aerr := s.parseAuthorize(r.Context(), params)
	if aerr != nil {
		s.redirectError(w, r, req, aerr)
		return
	}
	http.Redirect(w, r, "/oauth/sign-in?"+withLang(req.params, localeOf(r)), http.StatusSeeOther)
}

// The sign-in machinery's text rules (package web).
var (
	normalizeEmail = web.NormalizeEmail
	normalizeCode  = web.NormalizeCode
	randomDigits   = web.RandomDigits
)
