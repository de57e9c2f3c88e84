package credentials

import (
	"context"
	"time"

	"bokat"
	"bokat/internal/oauth"
)

// Store is what the credential lifecycle needs of the database.
type Store interface {
	InTx(ctx context.Context, fn func(Tx) error) error
	// PartnerCredentials returns every partner credential, revoked ones
	// included, oldest first.
	PartnerCredentials(ctx context.Context) ([]Partner, error)
	// OAuthClientCredentials returns every OAuth client, revoked ones
	// included, oldest first.
	OAuthClientCredentials(ctx context.Context) ([]OAuthClient, error)
	// OperatorAudit returns audit records, newest first, as q selects.
	OperatorAudit(ctx context.Context, q AuditQuery) ([]AuditRecord, error)
	// ProviderTokens returns the provider's API tokens, revoked ones
	// included, oldest first.
	ProviderTokens(ctx context.Context, providerID string) ([]ProviderToken, error)
}

// AuditTx is what appending to the operator audit needs of a transaction.
// Any package's Tx that embeds it can call AppendAudit.
type AuditTx interface {
	InsertOperatorAudit(ctx context.Context, r AuditRecord) error
}

// Tx is what the lifecycle does inside one write transaction. Lookups of
// an unknown id return bokat.ErrNotFound.
type Tx interface {
	AuditTx
	// InsertPartnerClient stores a new partner credential under the keyed
	// hash of its token.
	InsertPartnerClient(ctx context.Context, p Partner, tokenHash string) error
	// PartnerCredential returns the partner credential with the id.
	PartnerCredential(ctx context.Context, id string) (Partner, error)
	// RotatePartnerToken makes newHash the credential's token. The token
	// it replaces stays valid until previousUntil (zero: not at all); a
	// token replaced before ends now. Revoked credentials are
	// bokat.ErrNotFound.
	RotatePartnerToken(ctx context.Context, id, newHash string, previousUntil, now time.Time) error
	// RevokePartner revokes the credential (every token of it); a revoked
	// or unknown one is bokat.ErrNotFound.
	RevokePartner(ctx context.Context, id string, now time.Time) error

	// CreateOAuthClient stores a new OAuth client in the transaction.
	CreateOAuthClient(ctx context.Context, c oauth.Client) error
	// OAuthClientCredential returns the OAuth client with the id.
	OAuthClientCredential(ctx context.Context, id string) (OAuthClient, error)
	// RevokeOAuthClient revokes the client, every grant of it and every
	// token of those grants, and returns how many grants it revoked; a
	// revoked or unknown client is bokat.ErrNotFound.
	RevokeOAuthClient(ctx context.Context, id string, now time.Time) (grants int, err error)
	// PurgeableDynamicClients returns up to limit dynamically registered
	// clients last used (or, never used, created) at or before unusedSince
	// that hold no token valid at now.
	PurgeableDynamicClients(ctx context.Context, unusedSince, now time.Time, limit int) ([]string, error)
	// DeleteOAuthClient deletes the client with its grants and tokens.
	DeleteOAuthClient(ctx context.Context, id string) error

	// ProviderTokenCredential returns the provider API token with the id.
	ProviderTokenCredential(ctx context.Context, id string) (ProviderToken, error)
	// RevokeProviderToken revokes the token; a revoked or unknown one is
	// bokat.ErrNotFound.
	RevokeProviderToken(ctx context.Context, id string, now time.Time) error
}

// ProviderToken is a provider API token (bkv_) as operators see it: no
// token and no hash.
type ProviderToken struct {
	ID         string
	ProviderID string
	Name       string
	Scopes     []bokat.Scope
	CreatedAt  time.Time
	// LastUsedAt is when it last authenticated a request (zero: never), to
	// the minute.
	LastUsedAt time.Time
	RevokedAt  time.Time
}

// State is StateRevoked or StateActive.
func (t ProviderToken) State() string {
	if !t.RevokedAt.IsZero() {
		return StateRevoked
	}
	return StateActive
}

// Partner is a partner credential as operators see it. It holds no token
// and no hash of one: nothing listed can be used to call the API.
type Partner struct {
	ID     string
	Name   string
	Mode   bokat.Mode
	Scopes []bokat.Scope
	// CreatedAt is when it was created; RotatedAt when its token was last
	// rotated (zero: never).
	CreatedAt time.Time
	RotatedAt time.Time
	// LastUsedAt is when it last authenticated a request (either token;
	// zero: never), to the minute (auth.UsageInterval).
	LastUsedAt time.Time
	// PreviousValidUntil is when the token the last rotation replaced
	// stops working (zero: it does not work); PreviousLastUsedAt is when
	// that token was last used since the rotation.
	PreviousValidUntil time.Time
	PreviousLastUsedAt time.Time
	// RevokedAt is when it was revoked (zero: active).
	RevokedAt time.Time
}

// The states of a credential.
const (
	StateActive   = "active"
	StateRotating = "rotating"
	StateRevoked  = "revoked"
)

// State is the credential's state at now: revoked; rotating while the
// replaced token still works; else active.
func (p Partner) State(now time.Time) string {
	switch {
	case !p.RevokedAt.IsZero():
		return StateRevoked
	case now.Before(p.PreviousValidUntil):
		return StateRotating
	}
	return StateActive
}

// OAuthClient is an OAuth client as operators see it: no secret or hash.
type OAuthClient struct {
	ID   string
	Name string
	// Registration is oauth.ClientOperator, oauth.ClientDynamic or
	// oauth.ClientMetadata.
	Registration string
	Mode         bokat.Mode
	Public       bool
	Scopes       []bokat.Scope
	RedirectURIs []string
	CreatedAt    time.Time
	// LastUsedAt is when one of its access tokens was last presented or
	// it last called the token endpoint (zero: never), to the minute.
	LastUsedAt time.Time
	RevokedAt  time.Time
}

// State is StateRevoked or StateActive.
func (c OAuthClient) State() string {
	if !c.RevokedAt.IsZero() {
		return StateRevoked
	}
	return StateActive
}

// AuditRecord is one row of the operator audit: who did what to which
// object, when. Details never hold a secret or customer contact data.
type AuditRecord struct {
	ID         string
	At         time.Time
	Actor      string
	Action     string
	ObjectKind string
	ObjectID   string
	Details    map[string]string
}

// AuditQuery selects audit records: of one object (kind and id, both or
// neither), before an instant (zero: any), at most Limit (0: 100, at most
// 1000), newest first.
type AuditQuery struct {
	ObjectKind string
	ObjectID   string
	Before     time.Time
	Limit      int
}
