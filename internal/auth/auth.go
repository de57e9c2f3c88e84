// Package auth authenticates callers. Partner tokens (and, once issued,
// OAuth access tokens) are random secrets of at least 256 bits that the
// store only ever sees as keyed hashes (HMAC-SHA256 with the server's
// pepper). It puts the resulting bokat.Principal in the request context.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
)

// Token prefixes tell the kinds of secret apart in logs-free diagnostics and
// let the authenticator route a bearer token to the right verifier.
const (
	PartnerTokenPrefix = bokat.PartnerTokenPrefix
	AccessTokenPrefix  = bokat.AccessTokenPrefix
	// ProviderTokenPrefix starts the provider API's tokens; no id uses it.
	ProviderTokenPrefix = bokat.ProviderTokenPrefix
)

// MinPepperBytes is the least length of the token-hashing pepper.
const MinPepperBytes = 32

// NewSecret returns prefix followed by 32 random bytes in unpadded base64url
// (256 bits of entropy).
func NewSecret(prefix string) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // cannot happen on supported platforms
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// NewPartnerToken returns a new partner token of the realm mode. A live
// token never starts with the test prefix (a random one that would is drawn
// again), so the first characters tell the realms apart without exception.
func NewPartnerToken(mode bokat.Mode) string {
	if mode.Test() {
		return NewSecret(bokat.PartnerTestTokenPrefix)
	}
	for {
		if t := NewSecret(PartnerTokenPrefix); !strings.HasPrefix(t, bokat.PartnerTestTokenPrefix) {
			return t
		}
	}
}

// Hasher computes the keyed hashes under which tokens are stored.
type Hasher struct{ pepper []byte }

// NewHasher returns a Hasher keyed with pepper, which must be at least
// MinPepperBytes long.
func NewHasher(pepper []byte) (*Hasher, error) {
	if len(pepper) < MinPepperBytes {
		return nil, fmt.Errorf("token pepper must be at least %d bytes, got %d", MinPepperBytes, len(pepper))
	}
	return &Hasher{pepper: append([]byte(nil), pepper...)}, nil
}

// Hash returns the hex keyed hash of a token, with a domain label so the
// same pepper never yields equal hashes for different token kinds.
func (h *Hasher) Hash(domain, token string) string {
	m := hmac.New(sha256.New, h.pepper)
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil))
}

// AccessTokenVerifier verifies OAuth access tokens (prefix AccessTokenPrefix).
type AccessTokenVerifier interface {
	VerifyAccessToken(ctx context.Context, token string) (bokat.Principal, error)
}

// Authenticator turns request credentials into a Principal.
type Authenticator struct {
	hasher    *Hasher
	partners  Store
	access    AccessTokenVerifier
	providers ProviderTokenStore
	now       func() time.Time
	usage     *Usage
}

// WithClock sets the clock deciding whether a rotated-out partner token is
// still within its overlap (time.Now by default).
func (a *Authenticator) WithClock(now func() time.Time) *Authenticator {
	if now != nil {
		a.now = now
	}
	return a
}

// WithUsage records the last use of the partner and provider credentials
// a authenticates with u (at most one write per credential and
// UsageInterval).
func (a *Authenticator) WithUsage(u *Usage) *Authenticator {
	a.usage = u
	return a
}

// WithProviderTokens lets a verify provider tokens (prefix
// ProviderTokenPrefix) against the store; without it they are refused.
func (a *Authenticator) WithProviderTokens(st ProviderTokenStore) *Authenticator {
	a.providers = st
	return a
}

const providerTokenHashDomain = "provider-token"

// CreateProviderToken creates a provider API token for the provider with
// the provider scopes, and returns its id and the token, which is shown to
// the operator once and stored only as its keyed hash.
func (a *Authenticator) CreateProviderToken(ctx context.Context, providerID, name string, scopes []bokat.Scope, now time.Time) (id, token string, err error) {
	if a.providers == nil {
		return "", "", errors.New("provider tokens are not configured")
	}
	u, err := uuid.NewV7()
	if err != nil {
		return "", "", err
	}
	id = bokat.ProviderTokenIDPrefix + strings.ReplaceAll(u.String(), "-", "")
	token = NewSecret(ProviderTokenPrefix)
	t := ProviderToken{ID: id, ProviderID: providerID, Name: name, Scopes: scopes, CreatedAt: now}
	if err := a.providers.CreateProviderToken(ctx, t, a.hasher.Hash(providerTokenHashDomain, token)); err != nil {
		return "", "", fmt.Errorf("store provider token: %w", err)
	}
	return id, token, nil
}

// NewAuthenticator returns an Authenticator verifying OAuth access tokens
// with access. access may be nil where no request is authenticated (the
// command that creates partner credentials); access tokens are then refused.
func NewAuthenticator(h *Hasher, partners Store, access AccessTokenVerifier) *Authenticator {
	return &Authenticator{hasher: h, partners: partners, access: access, now: time.Now}
}

const partnerHashDomain = "partner"

// HashPartnerToken returns the keyed hash a partner token is stored under.
func (h *Hasher) HashPartnerToken(token string) string { return h.Hash(partnerHashDomain, token) }

// CreatePartner creates a partner client with the scopes and returns its id
// and token. The token is shown to the operator once and stored only hashed.
func (a *Authenticator) CreatePartner(ctx context.Context, name string, scopes []bokat.Scope, now time.Time) (clientID, token string, err error) {
	return a.CreatePartnerIn(ctx, bokat.ModeLive, name, scopes, now)
}

// CreatePartnerIn is CreatePartner in the realm mode: a test credential's
// token starts with bokat.PartnerTestTokenPrefix, a live one's with
// bokat.PartnerTokenPrefix and never with the test prefix.
func (a *Authenticator) CreatePartnerIn(ctx context.Context, mode bokat.Mode, name string, scopes []bokat.Scope, now time.Time) (clientID, token string, err error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", "", err
	}
	clientID = bokat.PartnerClientIDPrefix + strings.ReplaceAll(id.String(), "-", "")
	token = NewPartnerToken(mode)
	c := PartnerClient{ID: clientID, Name: name, Scopes: scopes, CreatedAt: now, Mode: mode.Or()}
	if err := a.partners.CreatePartnerClient(ctx, c, a.hasher.Hash(partnerHashDomain, token)); err != nil {
		return "", "", fmt.Errorf("store partner client: %w", err)
	}
	return clientID, token, nil
}

// EnsurePartner stores the partner client with the given id and token unless
// it exists. It serves the stable development token of `serve --demo`.
func (a *Authenticator) EnsurePartner(ctx context.Context, clientID, name, token string, scopes []bokat.Scope, now time.Time) error {
	hash := a.hasher.Hash(partnerHashDomain, token)
	if _, err := a.partners.PartnerClientByTokenHash(ctx, hash, now); err == nil {
		return nil
	} else if !errors.Is(err, bokat.ErrNotFound) {
		return err
	}
	c := PartnerClient{ID: clientID, Name: name, Scopes: scopes, CreatedAt: now}
	err := a.partners.CreatePartnerClient(ctx, c, hash)
	if errors.Is(err, bokat.ErrConflict) {
		return nil
	}
	return err
}

// ErrInvalidCredential is returned for a credential that is malformed,
// unknown, expired or revoked.
var ErrInvalidCredential = errors.New("invalid credential")

// Credential extracts the credential of a request: the token and the form
// that carried it. It reports an error when the two headers disagree.
func Credential(r *http.Request) (token string, form bokat.CredentialForm, err error) {
	header := strings.TrimSpace(r.Header.Get("X-Service-Requests-Token"))
	var bearer string
	if authz := r.Header.Get("Authorization"); authz != "" {
		scheme, value, ok := strings.Cut(authz, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(value) == "" {
			return "", bokat.FormNone, fmt.Errorf("%w: Authorization must be \"Bearer <token>\"", ErrInvalidCredential)
		}
		bearer = strings.TrimSpace(value)
	}
	switch {
	case bearer != "" && header != "" && bearer != header:
		return "", bokat.FormNone, fmt.Errorf("%w: send one credential, not two different ones", ErrInvalidCredential)
	case header != "":
		return header, bokat.FormPartnerHeader, nil
	case bearer != "":
		return bearer, bokat.FormBearer, nil
	}
	return "", bokat.FormNone, nil
}

// Authenticate returns the principal of a request to the surface aud:
// anonymous when it carries no credential, or ErrInvalidCredential
// (wrapped) when the credential is not valid there. An OAuth access token
// is valid only on the audience it was issued for (RFC 8707): a token for
// the MCP endpoint is refused by the REST API and the reverse. Partner
// tokens are valid on every surface. A store failure is returned as it is.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request, aud bokat.Audience) (bokat.Principal, error) {
	token, form, err := Credential(r)
	if err != nil {
		return bokat.Principal{}, err
	}
	if form == bokat.FormNone {
		return bokat.Principal{Kind: bokat.PrincipalAnonymous}, nil
	}
	if strings.HasPrefix(token, AccessTokenPrefix) {
		if form != bokat.FormBearer || a.access == nil {
			return bokat.Principal{}, fmt.Errorf("%w: access tokens go in Authorization: Bearer", ErrInvalidCredential)
		}
		p, err := a.access.VerifyAccessToken(ctx, token)
		if err != nil {
			return bokat.Principal{}, err
		}
		if p.Audience != aud {
			return bokat.Principal{}, fmt.Errorf("%w: the access token was issued for another resource", ErrInvalidCredential)
		}
		p.Form = form
		return p, nil
	}
	if strings.HasPrefix(token, ProviderTokenPrefix) && len(token) <= 200 && a.providers != nil {
		t, err := a.providers.ProviderTokenByHash(ctx, a.hasher.Hash(providerTokenHashDomain, token))
		if errors.Is(err, bokat.ErrNotFound) {
			return bokat.Principal{}, fmt.Errorf("%w: unknown or revoked token", ErrInvalidCredential)
		}
		if err != nil {
			return bokat.Principal{}, err
		}
		a.usage.Record(ctx, UseProviderToken, t.ID, a.now())
		return bokat.Principal{Kind: bokat.PrincipalProvider, ClientID: t.ID, ProviderID: t.ProviderID, Scopes: t.Scopes, Form: form}, nil
	}
	if !strings.HasPrefix(token, PartnerTokenPrefix) || len(token) > 200 {
		return bokat.Principal{}, fmt.Errorf("%w: unrecognised token", ErrInvalidCredential)
	}
	now := a.now()
	c, err := a.partners.PartnerClientByTokenHash(ctx, a.hasher.Hash(partnerHashDomain, token), now)
	if errors.Is(err, bokat.ErrNotFound) {
		return bokat.Principal{}, fmt.Errorf("%w: unknown or revoked token", ErrInvalidCredential)
	}
	if err != nil {
		return bokat.Principal{}, err
	}
	mode := c.Mode.Or()
	if mode.Test() != strings.HasPrefix(token, bokat.PartnerTestTokenPrefix) {
		// A stored realm that disagrees with the token's form is refused
		// rather than trusted either way.
		return bokat.Principal{}, fmt.Errorf("%w: the token's form does not match its credential's mode", ErrInvalidCredential)
	}
	if c.Previous {
		a.usage.Record(ctx, UsePartnerPrevious, c.ID, now)
	} else {
		a.usage.Record(ctx, UsePartner, c.ID, now)
	}
	return bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: c.ID, Scopes: c.Scopes, Form: form, Mode: mode}, nil
}

type principalKey struct{}

// WithPrincipal returns ctx carrying the principal.
func WithPrincipal(ctx context.Context, p bokat.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in ctx (anonymous when none was set).
func PrincipalFrom(ctx context.Context) bokat.Principal {
	if p, ok := ctx.Value(principalKey{}).(bokat.Principal); ok {
		return p
	}
	return bokat.Principal{Kind: bokat.PrincipalAnonymous}
}
