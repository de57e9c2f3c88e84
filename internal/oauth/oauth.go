// Package oauth is Bokat's OAuth 2 authorization server for delegated
// users: an assistant (the client) acts for a customer who signs in with a
// one-time code sent to their e-mail and approves, on a consent page, what
// the assistant may do.
//
// It is a narrow server written on the standard library against the RFCs it
// serves, each rule pinned by a negative test:
//
//   - RFC 6749 authorization code grant and refresh grant only (no implicit,
//     password or client-credentials grants); exact redirect URI matching
//     (RFC 8252 section 7.3: any port on an http loopback redirect URI);
//   - RFC 7636 PKCE, mandatory for every client, S256 only;
//   - refresh tokens rotate on every use; a replayed refresh token or a
//     second use of an authorization code revokes the whole token family
//     (RFC 9700 sections 2.2.2 and 4.14, OAuth 2.1);
//   - RFC 8707 resource indicators: every grant is bound to one audience,
//     the REST API or the MCP endpoint, and its tokens are valid only there;
//   - RFC 7009 revocation, RFC 8414 metadata, RFC 9207 `iss` in
//     authorization responses.
//
// Every secret it issues (client secrets, sign-in codes, browser sessions,
// authorization codes, access and refresh tokens) is stored only as a keyed
// hash (auth.Hasher); none is ever logged. The only log line that carries a
// secret is the development-only echo of an e-mail sign-in code.
package oauth

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/web"
)

// Lifetimes and limits.
const (
	// CodeTTL is the lifetime of an authorization code (at most 60 s).
	CodeTTL = 60 * time.Second
	// AccessTokenTTL is the lifetime of an access token.
	AccessTokenTTL = 15 * time.Minute
	// RefreshTokenTTL is the lifetime of one refresh token; each use
	// rotates it and starts a new one.
	RefreshTokenTTL = 30 * 24 * time.Hour
	// SignInCodeTTL is how long an e-mailed sign-in code is valid.
	SignInCodeTTL = web.CodeTTL
	// SignInAttempts is how many times one sign-in code may be tried.
	SignInAttempts = web.CodeAttempts
	// SignInSendLimit codes at most are sent to one address per
	// SignInSendWindow, from all addresses together (a bound on the mail a
	// victim can be sent and on code guessing). Per requesting address the
	// limiter allows fewer (Limits.SignInAddress), so that one attacker
	// cannot spend a user's budget.
	SignInSendLimit  = web.SendLimit
	SignInSendWindow = web.SendWindow
	// SessionTTL is the lifetime of a signed-in browser session.
	SessionTTL = 30 * time.Minute
	// SignInCodeDigits is the length of an e-mailed sign-in code.
	SignInCodeDigits = web.CodeDigits
)

// Prefixes of the secrets and ids this package issues (access tokens use
// auth.AccessTokenPrefix); bokat's prefix table holds them all.
const (
	RefreshTokenPrefix = bokat.RefreshTokenPrefix
	CodePrefix         = bokat.AuthorizationCodePrefix
	ClientSecretPrefix = bokat.ClientSecretPrefix
	ClientIDPrefix     = bokat.OAuthClientIDPrefix
	UserIDPrefix       = bokat.UserIDPrefix
)

// Hash domains: the same pepper never yields equal hashes for two kinds.
const (
	domainAccess       = "access"
	domainRefresh      = "refresh"
	domainCode         = "code"
	domainClientSecret = "oauth_client_secret"
	domainSession      = "session"
)

// CodeSender delivers a sign-in code to a customer's e-mail address
// (web.CodeSender).
type CodeSender = web.CodeSender

// Config holds the server's dependencies.
type Config struct {
	// BaseURL is the public origin of the service, without a trailing
	// slash; it is the issuer identifier.
	BaseURL string
	// Production turns off the development echo of sign-in codes to the log.
	Production bool
	Store      Store
	Hasher     *auth.Hasher
	// Sender delivers sign-in codes. When nil, development writes codes to
	// the log only, and production answers the sign-in page with 503.
	Sender CodeSender
	Logger *slog.Logger
	// Now is the clock; defaults to time.Now.
	Now func() time.Time
	// Limiter enforces Limits; nil disables rate limiting (the store's
	// per-address send bound still applies).
	Limiter Limiter
	// Limits default to DefaultLimits.
	Limits *Limits
	// Metrics counts rate-limit refusals and limiter failures (optional).
	Metrics Metrics
	// DocumentGuard, when set, enables Client ID Metadata Documents: https
	// client ids whose documents are fetched through this SSRF guard (the
	// webhooks' guard). DocumentTLS overrides the TLS configuration of
	// those fetches (tests trust their own certificate with it).
	DocumentGuard DocumentGuard
	DocumentTLS   *tls.Config
	// Usage records each client's last use (an access token presented, a
	// token request); nil records nothing.
	Usage *auth.Usage
}

// Server is the authorization server. It also verifies the access tokens
// it issues (auth.AccessTokenVerifier).
type Server struct {
	issuer     string
	production bool
	secure     bool
	store      Store
	hasher     *auth.Hasher
	sender     CodeSender
	log        *slog.Logger
	now        func() time.Time
	cop        *http.CrossOriginProtection
	limiter    Limiter
	limits     Limits
	metrics    Metrics
	documents  *clientDocuments
	codes      *web.Codes
	usage      *auth.Usage
	// limiterWarned is when the last limiter warning was logged (Unix ns).
	limiterWarned atomic.Int64
}

var _ auth.AccessTokenVerifier = (*Server)(nil)

// New returns a Server for the configuration.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Hasher == nil || cfg.Logger == nil || cfg.BaseURL == "" {
		return nil, errors.New("oauth: BaseURL, Store, Hasher and Logger are required")
	}
	s := &Server{
		issuer:     strings.TrimRight(cfg.BaseURL, "/"),
		production: cfg.Production,
		store:      cfg.Store,
		hasher:     cfg.Hasher,
		sender:     cfg.Sender,
		log:        cfg.Logger,
		now:        cfg.Now,
		limiter:    cfg.Limiter,
		limits:     DefaultLimits(),
		metrics:    cfg.Metrics,
		usage:      cfg.Usage,
	}
	if cfg.Limits != nil {
		s.limits = *cfg.Limits
	}
	if cfg.DocumentGuard != nil {
		s.documents = newClientDocuments(cfg.DocumentGuard, cfg.DocumentTLS)
	}
	s.secure = strings.HasPrefix(s.issuer, "https://")
	if s.now == nil {
		s.now = time.Now
	}
	s.codes = &web.Codes{Hasher: s.hasher, Sender: s.sender, Production: s.production, Log: s.log, Now: s.now}
	s.cop = http.NewCrossOriginProtection()
	s.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, http.StatusForbidden, "err_csrf", "cross_origin_request")
	}))
	return s, nil
}

// The endpoints, as the HTTP layer mounts them.

// Metadata serves GET /.well-known/oauth-authorization-server (RFC 8414).
func (s *Server) Metadata() http.Handler { return http.HandlerFunc(s.handleMetadata) }

// Authorize serves GET and POST /oauth/authorize: the authorization
// endpoint and its consent form.
func (s *Server) Authorize() http.Handler { return s.cop.Handler(http.HandlerFunc(s.handleAuthorize)) }

// SignIn serves GET and POST /oauth/sign-in: the e-mail form.
func (s *Server) SignIn() http.Handler { return s.cop.Handler(http.HandlerFunc(s.handleSignIn)) }

// SignInCode serves GET and POST /oauth/sign-in/code: the code form.
func (s *Server) SignInCode() http.Handler {
	return s.cop.Handler(http.HandlerFunc(s.handleSignInCode))
}

// SignOut serves POST /oauth/sign-out.
func (s *Server) SignOut() http.Handler { return s.cop.Handler(http.HandlerFunc(s.handleSignOut)) }

// Token serves POST /oauth/token.
func (s *Server) Token() http.Handler { return http.HandlerFunc(s.handleToken) }

// Register serves POST /oauth/register (RFC 7591 dynamic registration
// of public clients).
func (s *Server) Register() http.Handler { return http.HandlerFunc(s.handleRegister) }

// Revoke serves POST /oauth/revoke (RFC 7009).
func (s *Server) Revoke() http.Handler { return http.HandlerFunc(s.handleRevoke) }

// VerifyAccessToken returns the principal of a valid access token: the
// client together with the signed-in user, with the token's scopes. An
// unknown, expired or revoked token (or one of a revoked client) yields an
// error wrapping auth.ErrInvalidCredential; a store failure is returned as
// it is.
func (s *Server) VerifyAccessToken(ctx context.Context, token string) (bokat.Principal, error) {
	if !strings.HasPrefix(token, auth.AccessTokenPrefix) || len(token) > 200 {
		return bokat.Principal{}, fmt.Errorf("%w: not an access token", auth.ErrInvalidCredential)
	}
	tg, err := s.store.OAuthToken(ctx, TokenAccess, s.hasher.Hash(domainAccess, token))
	if errors.Is(err, bokat.ErrNotFound) {
		return bokat.Principal{}, fmt.Errorf("%w: unknown access token", auth.ErrInvalidCredential)
	}
	if err != nil {
		return bokat.Principal{}, err
	}
	switch {
	case !tg.Token.RevokedAt.IsZero() || !tg.Grant.RevokedAt.IsZero() || !tg.ClientActive:
		return bokat.Principal{}, fmt.Errorf("%w: access token revoked", auth.ErrInvalidCredential)
	case !s.now().Before(tg.Token.ExpiresAt):
		return bokat.Principal{}, fmt.Errorf("%w: access token expired", auth.ErrInvalidCredential)
	}
	mode := tg.ClientMode.Or()
	if !formMatches(mode, auth.AccessTokenPrefix, token) {
		return bokat.Principal{}, fmt.Errorf("%w: the token's form does not match its client's mode", auth.ErrInvalidCredential)
	}
	s.usage.Record(ctx, auth.UseOAuthClient, tg.Grant.ClientID, s.now())
	return bokat.Principal{
		Kind:     bokat.PrincipalOAuth,
		ClientID: tg.Grant.ClientID,
		UserID:   tg.Grant.UserID,
		Scopes:   tg.Token.Scopes,
		Audience: tg.Grant.Audience,
		Mode:     mode,
	}, nil
}

// audienceOf maps an RFC 8707 resource parameter to the audience it
// names: {issuer}/mcp is the MCP endpoint; {issuer} (the resource of the
// API's RFC 9728 metadata) and {issuer}/v1 are the REST API. Anything else
// is unknown (invalid_target). A request without a resource is for the
// REST API, so that clients written before audiences keep working.
func (s *Server) audienceOf(resource string) (bokat.Audience, bool) {
	switch resource {
	case s.issuer, s.issuer + "/v1":
		return bokat.AudienceAPI, true
	case s.issuer + "/mcp":
		return bokat.AudienceMCP, true
	}
	return "", false
}

// RunPurge deletes expired sign-in codes, sessions, tokens and spent grants
// every interval until ctx ends. It is a background worker of `serve`.
func (s *Server) RunPurge(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := s.store.PurgeOAuth(ctx, s.now())
		if err != nil && ctx.Err() == nil {
			s.log.Warn("oauth purge failed", "error", err.Error())
		} else if n > 0 {
			s.log.Info("oauth purge", "deleted_rows", n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
