package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/auth"
)

// authzRequest is a validated authorization request (RFC 6749 4.1.1 with
// RFC 7636 4.3).
type authzRequest struct {
	client        Client
	redirectURI   string
	redirectGiven bool
	scopes        []bokat.Scope
	state         string
	stateGiven    bool
	challenge     string
	audience      bokat.Audience
	// params are the request's own parameters, which the sign-in and
	// consent pages carry along and send back.
	params url.Values
}

// authzError is a refused authorization request. When redirect is false the
// client or its redirect URI could not be trusted: the customer sees an
// error page and is never sent to the URI. Otherwise the error goes back to
// the client's redirect URI (RFC 6749 4.1.2.1).
type authzError struct {
	redirect    bool
	code        string // RFC 6749 error code, or the page's reason code
	description string
	pageText    string // text key of the error page when !redirect
	status      int    // HTTP status of the error page
	err         error  // an internal failure, logged
}

// The parameters of an authorization request this server reads.
var authzParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state",
	"code_challenge", "code_challenge_method"}

// challengeRe is a S256 code challenge: BASE64URL(SHA256(verifier)) without
// padding, always 43 characters (RFC 7636 4.2).
var challengeRe = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// parseAuthorize validates the parameters of an authorization request.
// Client and redirect URI come first: until both are trusted, nothing is
// sent to the redirect URI (the error is a page, with the request's client
// when it is known, so that the page can say what it knows of it); after
// that, errors go back to the client with the request read so far.
func (s *Server) parseAuthorize(ctx context.Context, v url.Values) (*authzRequest, *authzError) {
	req, aerr := s.authorizeClient(ctx, v)
	if aerr != nil {
		return req, aerr
	}
	for _, step := range []func(*authzRequest, url.Values) *authzError{
		s.authorizeTarget, authorizeResponseType, authorizeChallenge, authorizeScope,
	} {
		if aerr := step(req, v); aerr != nil {
			return req, aerr
		}
	}
	return req, nil
}

// authzPage is an authorization error shown as a page, not sent to the
// client.
func authzPage(status int, code, text string) *authzError {
	return &authzError{code: code, pageText: text, status: status}
}

// authzRedirect is an authorization error sent back to the client.
func authzRedirect(code, description string) *authzError {
	return &authzError{redirect: true, code: code, description: description}
}

// authorizeClient starts the request with its client and redirect URI,
// the one registered URI when none is given (RFC 6749 3.1.2.3). A redirect
// URI it cannot trust is an error page (never a redirect), returned with
// the request holding its client only.
func (s *Server) authorizeClient(ctx context.Context, v url.Values) (*authzRequest, *authzError) {
	if len(v["client_id"]) != 1 || v.Get("client_id") == "" || len(v.Get("client_id")) > maxClientIDURL {
		return nil, authzPage(http.StatusBadRequest, "invalid_client_id", "err_unknown_client")
	}
	client, err := s.lookupClient(ctx, v.Get("client_id"))
	if errors.Is(err, bokat.ErrNotFound) {
		return nil, authzPage(http.StatusBadRequest, "unknown_client", "err_unknown_client")
	}
	if documentError(err) {
		s.log.InfoContext(ctx, "client metadata document refused", "client_id", v.Get("client_id"), "reason", err.Error())
		return nil, authzPage(http.StatusBadRequest, "invalid_client_metadata", "err_unknown_client")
	}
	if err != nil {
		return nil, &authzError{code: "server_error", pageText: "err_internal", status: http.StatusServiceUnavailable, err: err}
	}
	req := &authzRequest{client: client, params: url.Values{}}
	switch uris := v["redirect_uri"]; {
	case len(uris) > 1:
		return req, authzPage(http.StatusBadRequest, "invalid_redirect_uri", "err_redirect")
	case len(uris) == 0:
		if len(client.RedirectURIs) != 1 {
			return req, authzPage(http.StatusBadRequest, "redirect_uri_required", "err_redirect")
		}
		req.redirectURI = client.RedirectURIs[0]
	default:
		if !matchRedirectURI(client.RedirectURIs, uris[0]) {
			return req, authzPage(http.StatusBadRequest, "invalid_redirect_uri", "err_redirect")
		}
		req.redirectURI, req.redirectGiven = uris[0], true
		req.params.Set("redirect_uri", uris[0])
	}
	req.params.Set("client_id", client.ID)
	return req, nil
}

// authorizeTarget reads the state and the resource (RFC 8707: one per
// request; a repeated or unknown one is invalid_target), then refuses a
// repeated parameter.
func (s *Server) authorizeTarget(req *authzRequest, v url.Values) *authzError {
	if st, ok := v["state"]; ok {
		req.state, req.stateGiven = st[0], true
		req.params.Set("state", st[0])
	}
	if len(v["resource"]) > 1 {
		return authzRedirect("invalid_target", "name one resource: "+s.issuer+"/mcp or "+s.issuer)
	}
	req.audience = bokat.AudienceAPI
	if r, ok := v["resource"]; ok {
		aud, known := s.audienceOf(r[0])
		if !known {
			return authzRedirect("invalid_target", "the resource must be "+s.issuer+"/mcp (the MCP endpoint) or "+s.issuer+" (the REST API)")
		}
		req.audience = aud
		req.params.Set("resource", r[0])
	}
	for _, p := range authzParams {
		if len(v[p]) > 1 {
			return authzRedirect("invalid_request", "the parameter "+p+" is repeated")
		}
	}
	return nil
}

// authorizeResponseType accepts response_type=code only.
func authorizeResponseType(req *authzRequest, v url.Values) *authzError {
	switch rt := v.Get("response_type"); rt {
	case "code":
		req.params.Set("response_type", rt)
		return nil
	case "":
		return authzRedirect("invalid_request", "response_type is required and must be code")
	default:
		return authzRedirect("unsupported_response_type", "only response_type=code is supported")
	}
}

// authorizeChallenge requires a PKCE code challenge with S256.
func authorizeChallenge(req *authzRequest, v url.Values) *authzError {
	challenge, method := v.Get("code_challenge"), v.Get("code_challenge_method")
	switch {
	case challenge == "":
		return authzRedirect("invalid_request", "code_challenge is required: PKCE with S256 is mandatory")
	case method == "":
		return authzRedirect("invalid_request", "code_challenge_method is required and must be S256 (plain is not accepted)")
	case method == "plain":
		return authzRedirect("invalid_request", "code_challenge_method plain is not accepted: use S256")
	case method != "S256":
		return authzRedirect("invalid_request", "code_challenge_method must be S256")
	case !challengeRe.MatchString(challenge):
		return authzRedirect("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the code verifier")
	}
	req.challenge = challenge
	req.params.Set("code_challenge", challenge)
	req.params.Set("code_challenge_method", method)
	return nil
}

// authorizeScope reads the scope, within the client's; without one the
// client's registered scopes apply (RFC 6749 3.3).
func authorizeScope(req *authzRequest, v url.Values) *authzError {
	raw, ok := v["scope"]
	if !ok {
		req.scopes = req.client.Scopes
		return nil
	}
	scopes, err := parseScope(raw[0], req.client.Scopes)
	if err != nil {
		return authzRedirect("invalid_scope", err.Error())
	}
	req.scopes = scopes
	req.params.Set("scope", raw[0])
	return nil
}

// parseScope reads a space-delimited scope parameter (RFC 6749 3.3). Every
// scope must be one of the contract's and among allowed.
func parseScope(raw string, allowed []bokat.Scope) ([]bokat.Scope, error) {
	fields := strings.Split(raw, " ")
	var out []bokat.Scope
	for _, f := range fields {
		if f == "" {
			continue
		}
		s := bokat.Scope(f)
		if !slices.Contains(allowed, s) {
			return nil, errors.New("the scope " + safeScopeName(f) + " is unknown or not allowed for this client")
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the scope parameter names no scope")
	}
	return out, nil
}

// safeScopeName keeps an echoed scope or parameter name short and within
// the characters RFC 6749 allows in error_description (sections 4.1.2.1
// and 5.2: printable ASCII except the double quote and the backslash); any
// other byte is shown as '?'.
func safeScopeName(s string) string {
	const limit = 60
	b := make([]byte, 0, min(len(s), limit)+3)
	for i := 0; i < len(s) && i < limit; i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			b = append(b, '?')
		} else {
			b = append(b, c)
		}
	}
	if len(s) > limit {
		b = append(b, "..."...)
	}
	return string(b)
}

// redirectURL adds params to a redirect URI, keeping its own query
// (RFC 6749 3.1.2).
func redirectURL(base string, params url.Values) string {
	u, err := url.Parse(base)
	if err != nil {
		return base // validated at registration; cannot happen
	}
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// redirectError sends an authorization error back to the client, or shows
// the error page when the redirect URI is not trusted.
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, req *authzRequest, e *authzError) {
	if e.err != nil {
		s.log.ErrorContext(r.Context(), "authorization request failed", "error", e.err.Error())
	}
	if !e.redirect || req == nil {
		s.renderClientError(w, r, req, e.status, e.pageText, e.code)
		return
	}
	params := url.Values{"error": {e.code}, "iss": {s.issuer}}
	if e.description != "" {
		params.Set("error_description", e.description)
	}
	if req.stateGiven {
		params.Set("state", req.state)
	}
	status := http.StatusFound
	if r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, redirectURL(req.redirectURI, params), status)
}

// withLang returns the request's parameters with the page language added.
func withLang(params url.Values, lang string) string {
	q := url.Values{}
	for k, v := range params {
		q[k] = v
	}
	q.Set("lang", lang)
	return q.Encode()
}

// handleAuthorize is the authorization endpoint. GET validates the request
// and shows the consent page (after sign-in); POST is the consent form's
// decision.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	params, ok := s.pageForm(w, r)
	if !ok {
		return
	}
	req, aerr := s.parseAuthorize(r.Context(), params)
	if aerr != nil {
		s.redirectError(w, r, req, aerr)
		return
	}
	lang := localeOf(r)
	userID, email, err := s.session(r)
	if err != nil {
		s.log.ErrorContext(r.Context(), "read session", "error", err.Error())
		s.renderClientError(w, r, req, http.StatusServiceUnavailable, "err_internal", "server_error")
		return
	}
	if userID == "" {
		http.Redirect(w, r, "/oauth/sign-in?"+withLang(req.params, lang), http.StatusSeeOther)
		return
	}
	if r.Method == http.MethodGet {
		s.renderConsent(w, r, req, email)
		return
	}
	switch r.PostForm.Get("decision") {
	case "approve":
		s.approve(w, r, req, userID)
	case "deny":
		s.redirectError(w, r, req, &authzError{redirect: true, code: "access_denied",
			description: "the customer denied the request"})
	default:
		s.renderClientError(w, r, req, http.StatusBadRequest, "err_request", "invalid_decision")
	}
}

func (s *Server) renderConsent(w http.ResponseWriter, r *http.Request, req *authzRequest, email string) {
	p := newPage(r, "consent_title")
	p.CSRF = s.csrfToken(s.browserID(w, r))
	p.Hidden = hiddenFields(req.params)
	p.setClient(req)
	p.Email = email
	for _, sc := range req.scopes {
		p.Scopes = append(p.Scopes, scopeTexts[p.Lang][sc])
	}
	s.render(w, r, http.StatusOK, "consent", p)
}

// approve issues an authorization code bound to the client, redirect URI,
// code challenge, scopes and user, and sends it to the client.
func (s *Server) approve(w http.ResponseWriter, r *http.Request, req *authzRequest, userID string) {
	id, err := uuid.NewV7()
	if err != nil {
		s.redirectError(w, r, req, &authzError{redirect: true, code: "server_error", err: err})
		return
	}
	code := auth.NewSecret(CodePrefix)
	now := s.now()
	g := Grant{
		ID:               id.String(),
		ClientID:         req.client.ID,
		UserID:           userID,
		Scopes:           req.scopes,
		CodeHash:         s.hasher.Hash(domainCode, code),
		RedirectURI:      req.redirectURI,
		RedirectURIGiven: req.redirectGiven,
		CodeChallenge:    req.challenge,
		Audience:         req.audience,
		CodeExpiresAt:    now.Add(CodeTTL),
		CreatedAt:        now,
	}
	if err := s.store.InTx(r.Context(), func(tx Tx) error { return tx.InsertGrant(r.Context(), g) }); err != nil {
		s.redirectError(w, r, req, &authzError{redirect: true, code: "temporarily_unavailable",
			description: "the authorization server could not store the grant", err: err})
		return
	}
	params := url.Values{"code": {code}, "iss": {s.issuer}}
	if req.stateGiven {
		params.Set("state", req.state)
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, redirectURL(req.redirectURI, params), http.StatusSeeOther)
}
