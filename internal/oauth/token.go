package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/ratelimit"
)

// tokenError is an RFC 6749 section 5.2 error of the token or revocation
// endpoint.
type tokenError struct {
	status      int
	code        string
	description string
	retryAfter  time.Duration // sent as Retry-After when set
	err         error         // an internal failure, logged
}

func errInvalidRequest(desc string) *tokenError {
	return &tokenError{status: http.StatusBadRequest, code: "invalid_request", description: desc}
}

func errInvalidGrant(desc string) *tokenError {
	return &tokenError{status: http.StatusBadRequest, code: "invalid_grant", description: desc}
}

// errInvalidTarget refuses a resource parameter (RFC 8707 section 2).
func errInvalidTarget(desc string) *tokenError {
	return &tokenError{status: http.StatusBadRequest, code: "invalid_target", description: desc}
}

// checkResource checks the resource parameter of a token request against
// the audience of the grant: it may be left out, and may name the grant's
// audience, but never another one.
func (s *Server) checkResource(r *http.Request, aud bokat.Audience) *tokenError {
	raw, ok := r.PostForm["resource"]
	if !ok {
		return nil
	}
	got, known := s.audienceOf(raw[0])
	switch {
	case !known:
		return errInvalidTarget("the resource must be " + s.issuer + "/mcp (the MCP endpoint) or " + s.issuer + " (the REST API)")
	case got != aud:
		return errInvalidTarget("the grant is for another resource; a token request may not change it")
	}
	return nil
}

var errInvalidClient = &tokenError{status: http.StatusUnauthorized, code: "invalid_client",
	description: "client authentication failed"}

func errServer(err error) *tokenError {
	return &tokenError{status: http.StatusInternalServerError, code: "server_error",
		description: "the authorization server failed; retry later", err: err}
}

func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
}

func (s *Server) writeTokenError(w http.ResponseWriter, r *http.Request, e *tokenError) {
	if e.err != nil {
		s.log.ErrorContext(r.Context(), "token endpoint failed", "error", e.err.Error())
	}
	noStore(w)
	if e.retryAfter > 0 {
		setRetryAfter(w, e.retryAfter)
	}
	if e.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="bokat"`)
	}
	writeJSON(w, e.status, map[string]string{"error": e.code, "error_description": e.description})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// parseTokenForm reads a form-encoded POST body (parameters in the query
// string are ignored) and refuses repeated parameters (RFC 6749 3.2).
func parseTokenForm(r *http.Request) *tokenError {
	if r.Method != http.MethodPost {
		return errInvalidRequest("use POST")
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return errInvalidRequest("the body must be application/x-www-form-urlencoded")
	}
	if err := r.ParseForm(); err != nil {
		return errInvalidRequest("the body is not a valid form")
	}
	// Parameters are checked in name order, so the same body always gets the
	// same answer (a map's order is random).
	names := slices.Sorted(maps.Keys(r.PostForm))
	for _, k := range names {
		if len(r.PostForm[k]) > 1 {
			return errInvalidRequest("the parameter " + safeScopeName(k) + " is repeated")
		}
	}
	// Client credentials are checked by authenticateClient (invalid_client);
	// every other parameter must be clean text before anything reads it.
	for _, k := range names {
		v := r.PostForm[k]
		if k == "client_id" || k == "client_secret" {
			continue
		}
		if bokat.CheckText(k, false) != "" {
			return errInvalidRequest("a parameter name is not valid text")
		}
		if why := bokat.CheckText(v[0], false); why != "" {
			return errInvalidRequest("the parameter " + safeScopeName(k) + " " + why)
		}
	}
	return nil
}

// errSlowDown is the refusal of a spent budget at the token and revocation
// endpoints: 429 with Retry-After and the OAuth error slow_down (registered
// for the token endpoint by RFC 8628: the client must wait before its next
// request).
func errSlowDown(wait time.Duration) *tokenError {
	return &tokenError{status: http.StatusTooManyRequests, code: "slow_down",
		description: "too many requests or failed client authentications; wait for Retry-After seconds",
		retryAfter:  wait}
}

// admitClient authenticates the client of a token or revocation request
// under the endpoints' budgets. Requests from an address, or for a client
// id, whose failed-authentication budget is spent are refused before their
// credentials are read; a failed authentication spends both budgets; an
// authenticated client spends its request budget.
func (s *Server) admitClient(r *http.Request) (Client, *tokenError) {
	ctx := r.Context()
	ipKey, clientKey := ratelimit.Caller(ctx), "client:"+claimedClientID(r)
	if wait := max(s.peek(ctx, s.limits.AuthFailuresIP, ipKey), s.peek(ctx, s.limits.AuthFailuresClient, clientKey)); wait > 0 {
		return Client{}, errSlowDown(wait)
	}
	c, e := s.authenticateClient(r)
	if e == errInvalidClient {
		wait := max(s.spend(ctx, s.limits.AuthFailuresIP, ipKey), s.spend(ctx, s.limits.AuthFailuresClient, clientKey))
		if wait > 0 {
			return Client{}, errSlowDown(wait)
		}
		return Client{}, e
	}
	if e != nil {
		return Client{}, e
	}
	if wait := s.spend(ctx, s.limits.Token, "client:"+c.ID); wait > 0 {
		return Client{}, errSlowDown(wait)
	}
	return c, nil
}

// claimedClientID is the client id a request names (Basic user name or
// client_id), unauthenticated and cut to 100 bytes: the key of its client's
// failure budget.
func claimedClientID(r *http.Request) string {
	id, _, ok := r.BasicAuth()
	if ok {
		if u, err := url.QueryUnescape(id); err == nil {
			id = u
		}
	} else {
		id = r.PostForm.Get("client_id")
	}
	if len(id) > 100 {
		id = id[:100]
	}
	return id
}

// authenticateClient identifies the client of a token or revocation
// request: client_secret_basic or client_secret_post for confidential
// clients, client_id alone ("none") for public ones. Exactly one method may
// be used.
func (s *Server) authenticateClient(r *http.Request) (Client, *tokenError) {
	id, secret, basic := r.BasicAuth()
	_, postSecret := r.PostForm["client_secret"]
	if basic {
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return Client{}, errInvalidClient
		}
		if postSecret {
			return Client{}, errInvalidRequest("use one client authentication method, not two")
		}
		if bodyID := r.PostForm.Get("client_id"); bodyID != "" && bodyID != id {
			return Client{}, errInvalidRequest("client_id differs from the authenticated client")
		}
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id == "" || len(id) > 100 && !isDocumentClientID(id) || len(id) > maxClientIDURL ||
		bokat.CheckText(id, false) != "" || bokat.CheckText(secret, false) != "" {
		return Client{}, errInvalidClient
	}
	c, err := s.store.OAuthClient(r.Context(), id)
	if errors.Is(err, bokat.ErrNotFound) {
		return Client{}, errInvalidClient
	}
	if err != nil {
		return Client{}, errServer(err)
	}
	if c.Public() {
		if secret != "" || postSecret || basic {
			return Client{}, errInvalidClient
		}
		return c, nil
	}
	if secret == "" || len(secret) > 200 ||
		subtle.ConstantTimeCompare([]byte(s.hasher.Hash(domainClientSecret, secret)), []byte(c.SecretHash)) != 1 ||
		!formMatches(c.Mode.Or(), ClientSecretPrefix, secret) {
		return Client{}, errInvalidClient
	}
	return c, nil
}

// tokenResponse is the RFC 6749 section 5.1 success body.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	if e := parseTokenForm(r); e != nil {
		s.writeTokenError(w, r, e)
		return
	}
	client, e := s.admitClient(r)
	if e != nil {
		s.writeTokenError(w, r, e)
		return
	}
	s.usage.Record(r.Context(), auth.UseOAuthClient, client.ID, s.now())
	var resp tokenResponse
	switch gt := r.PostForm.Get("grant_type"); gt {
	case "authorization_code":
		resp, e = s.exchangeCode(r, client)
	case "refresh_token":
		resp, e = s.refresh(r, client)
	case "":
		e = errInvalidRequest("grant_type is required")
	default:
		e = &tokenError{status: http.StatusBadRequest, code: "unsupported_grant_type",
			description: "grant_type must be authorization_code or refresh_token"}
	}
	if e != nil {
		s.writeTokenError(w, r, e)
		return
	}
	noStore(w)
	writeJSON(w, http.StatusOK, resp)
}

// verifierRe is a PKCE code verifier (RFC 7636 4.1).
var verifierRe = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// s256 is the S256 code challenge of a verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// exchangeCode redeems an authorization code (RFC 6749 4.1.3, RFC 7636
// 4.6). A code is single use: a second use revokes every token issued from
// it. The revocation commits although the request fails.
func (s *Server) exchangeCode(r *http.Request, client Client) (tokenResponse, *tokenError) {
	ctx := r.Context()
	code, verifier, redirect := r.PostForm.Get("code"), r.PostForm.Get("code_verifier"), r.PostForm.Get("redirect_uri")
	switch {
	case code == "":
		return tokenResponse{}, errInvalidRequest("code is required")
	case len(code) > 200:
		return tokenResponse{}, errInvalidGrant("the authorization code is invalid")
	}
	// A missing or malformed verifier is refused only after the code is
	// spent: any redemption attempt by the code's client burns it.
	var badVerifier *tokenError
	switch {
	case verifier == "":
		badVerifier = errInvalidRequest("code_verifier is required: PKCE is mandatory")
	case !verifierRe.MatchString(verifier):
		badVerifier = errInvalidRequest("code_verifier must be 43 to 128 unreserved characters")
	}
	var (
		resp   tokenResponse
		refuse *tokenError
	)
	now := s.now()
	err := s.store.InTx(ctx, func(tx Tx) error {
		resp, refuse = tokenResponse{}, nil
		g, err := tx.GrantByCodeHash(ctx, s.hasher.Hash(domainCode, code))
		if errors.Is(err, bokat.ErrNotFound) {
			refuse = errInvalidGrant("the authorization code is invalid")
			return nil
		}
		if err != nil {
			return err
		}
		if g.ClientID != client.ID {
			refuse = errInvalidGrant("the authorization code was issued to another client")
			return nil
		}
		first, err := tx.MarkCodeUsed(ctx, g.ID, now)
		if err != nil {
			return err
		}
		if !first {
			refuse = errInvalidGrant("the authorization code was already used; every token issued from it is now revoked")
			return tx.RevokeGrant(ctx, g.ID, "authorization code reused", now)
		}
		switch {
		case badVerifier != nil:
			refuse = badVerifier
		case !g.RevokedAt.IsZero():
			refuse = errInvalidGrant("the authorization code was revoked")
		case !now.Before(g.CodeExpiresAt):
			refuse = errInvalidGrant("the authorization code has expired")
		case g.RedirectURIGiven && redirect != g.RedirectURI,
			!g.RedirectURIGiven && redirect != "" && redirect != g.RedirectURI:
			refuse = errInvalidGrant("redirect_uri differs from the authorization request")
		case subtle.ConstantTimeCompare([]byte(s256(verifier)), []byte(g.CodeChallenge)) != 1:
			refuse = errInvalidGrant("code_verifier does not match the code_challenge")
		default:
			refuse = s.checkResource(r, g.Audience)
		}
		if refuse != nil {
			// The code is spent: a failed redemption burns it, so a stolen
			// code cannot be retried against the verifier.
			return nil
		}
		resp, err = s.issue(ctx, tx, g, client.Mode, g.Scopes, g.Scopes, now)
		return err
	})
	if err != nil {
		return tokenResponse{}, errServer(err)
	}
	return resp, refuse
}

// refresh redeems a refresh token (RFC 6749 section 6) and rotates it. A
// second use of a refresh token revokes its whole family (RFC 9700 4.14.2);
// the revocation commits although the request fails.
func (s *Server) refresh(r *http.Request, client Client) (tokenResponse, *tokenError) {
	ctx := r.Context()
	token := r.PostForm.Get("refresh_token")
	if token == "" {
		return tokenResponse{}, errInvalidRequest("refresh_token is required")
	}
	if !isRefreshToken(token) || len(token) > 200 {
		return tokenResponse{}, errInvalidGrant("the refresh token is invalid")
	}
	var (
		resp   tokenResponse
		refuse *tokenError
	)
	now := s.now()
	hash := s.hasher.Hash(domainRefresh, token)
	err := s.store.InTx(ctx, func(tx Tx) error {
		resp, refuse = tokenResponse{}, nil
		tg, err := tx.OAuthToken(ctx, TokenRefresh, hash)
		if errors.Is(err, bokat.ErrNotFound) {
			refuse = errInvalidGrant("the refresh token is invalid")
			return nil
		}
		if err != nil {
			return err
		}
		if tg.Grant.ClientID != client.ID {
			refuse = errInvalidGrant("the refresh token was issued to another client")
			return nil
		}
		if !tg.Token.RevokedAt.IsZero() || !tg.Grant.RevokedAt.IsZero() || !tg.ClientActive {
			refuse = errInvalidGrant("the refresh token was revoked")
			return nil
		}
		if !formMatches(client.Mode.Or(), RefreshTokenPrefix, token) {
			refuse = errInvalidGrant("the refresh token's form does not match its client's mode")
			return nil
		}
		first, err := tx.MarkRefreshUsed(ctx, hash, now)
		if err != nil {
			return err
		}
		if !first {
			refuse = errInvalidGrant("the refresh token was already used; its whole token family is now revoked")
			return tx.RevokeGrant(ctx, tg.Grant.ID, "refresh token reused", now)
		}
		if !now.Before(tg.Token.ExpiresAt) {
			refuse = errInvalidGrant("the refresh token has expired")
			return nil
		}
		if refuse = s.checkResource(r, tg.Grant.Audience); refuse != nil {
			return errRollback
		}
		accessScopes := tg.Token.Scopes
		if raw, ok := r.PostForm["scope"]; ok {
			narrowed, err := parseScope(raw[0], tg.Token.Scopes)
			if err != nil {
				refuse = &tokenError{status: http.StatusBadRequest, code: "invalid_scope", description: err.Error()}
				return errRollback
			}
			accessScopes = narrowed
		}
		resp, err = s.issue(ctx, tx, tg.Grant, client.Mode, accessScopes, tg.Token.Scopes, now)
		return err
	})
	if err != nil && !errors.Is(err, errRollback) {
		return tokenResponse{}, errServer(err)
	}
	return resp, refuse
}

// isRefreshToken reports whether token has the form of a refresh token:
// the current prefix, or the one refresh tokens had before it (the booking
// request ids' prefix), accepted until the last of those expires
// (RefreshTokenTTL after the release that changed it).
func isRefreshToken(token string) bool {
	return strings.HasPrefix(token, RefreshTokenPrefix) || strings.HasPrefix(token, bokat.LegacyRefreshTokenPrefix)
}

// errRollback undoes a transaction whose request is refused without a
// lasting effect.
var errRollback = errors.New("rollback")

// issue stores and returns a new access token (with accessScopes) and a new
// refresh token (with refreshScopes, which stay those of the grant's
// refresh chain, RFC 6749 section 6) in the grant's family.
//
// The access and refresh tokens of a test-realm client have the test form
// (bokat.AccessTestTokenPrefix, bokat.RefreshTestTokenPrefix); a live
// one's never do.
func (s *Server) issue(ctx context.Context, tx Tx, g Grant, mode bokat.Mode, accessScopes, refreshScopes []bokat.Scope, now time.Time) (tokenResponse, error) {
	access, refresh := newSecret(mode, auth.AccessTokenPrefix), newSecret(mode, RefreshTokenPrefix)
	for _, t := range []Token{
		{Hash: s.hasher.Hash(domainAccess, access), Kind: TokenAccess, GrantID: g.ID, Scopes: accessScopes,
			CreatedAt: now, ExpiresAt: now.Add(AccessTokenTTL)},
		{Hash: s.hasher.Hash(domainRefresh, refresh), Kind: TokenRefresh, GrantID: g.ID, Scopes: refreshScopes,
			CreatedAt: now, ExpiresAt: now.Add(RefreshTokenTTL)},
	} {
		if err := tx.InsertToken(ctx, t); err != nil {
			return tokenResponse{}, err
		}
	}
	return tokenResponse{
		AccessToken:  access,
		TokenType:    "Bearer",
		ExpiresIn:    int(AccessTokenTTL.Seconds()),
		RefreshToken: refresh,
		Scope:        scopeString(accessScopes),
	}, nil
}

func scopeString(scopes []bokat.Scope) string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return strings.Join(out, " ")
}

// handleRevoke is the revocation endpoint (RFC 7009). It answers 200 for
// unknown tokens and for tokens of other clients alike, so that it tells a
// caller nothing about tokens it does not hold. Revoking a refresh token
// revokes its whole family; revoking an access token revokes that token.
func (s *Server) handleRevoke(w http.ResponseWriter, r *http.Request) {
	if e := parseTokenForm(r); e != nil {
		s.writeTokenError(w, r, e)
		return
	}
	client, e := s.admitClient(r)
	if e != nil {
		s.writeTokenError(w, r, e)
		return
	}
	token := r.PostForm.Get("token")
	if token == "" {
		s.writeTokenError(w, r, errInvalidRequest("token is required"))
		return
	}
	kinds := []string{TokenAccess, TokenRefresh}
	if r.PostForm.Get("token_type_hint") == "refresh_token" {
		slices.Reverse(kinds)
	}
	now := s.now()
	ctx := r.Context()
	err := s.store.InTx(ctx, func(tx Tx) error {
		if len(token) > 200 {
			return nil
		}
		for _, kind := range kinds {
			domain := domainAccess
			if kind == TokenRefresh {
				domain = domainRefresh
			}
			hash := s.hasher.Hash(domain, token)
			tg, err := tx.OAuthToken(ctx, kind, hash)
			if errors.Is(err, bokat.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if tg.Grant.ClientID != client.ID {
				return nil
			}
			if kind == TokenRefresh {
				return tx.RevokeGrant(ctx, tg.Grant.ID, "refresh token revoked by the client", now)
			}
			return tx.RevokeToken(ctx, hash, now)
		}
		return nil
	})
	if err != nil {
		s.writeTokenError(w, r, &tokenError{status: http.StatusServiceUnavailable, code: "temporarily_unavailable",
			description: "the authorization server could not revoke the token; retry", err: err})
		return
	}
	noStore(w)
	w.WriteHeader(http.StatusOK)
}
