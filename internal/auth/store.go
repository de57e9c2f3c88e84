package auth

import (
	"context"
	"time"

	"bokat"
)

// Store is what partner authentication needs of the database.
type Store interface {
	// CreatePartnerClient stores a partner client with the keyed hash of
	// its token; a taken hash or id is bokat.ErrConflict.
	CreatePartnerClient(ctx context.Context, c PartnerClient, tokenHash string) error
	// PartnerClientByTokenHash returns the unrevoked partner client whose
	// current token has the hash, or whose replaced token (a rotation's)
	// has it and is still valid at now (PartnerClient.Previous), or
	// bokat.ErrNotFound.
	PartnerClientByTokenHash(ctx context.Context, tokenHash string, now time.Time) (PartnerClient, error)
}

// PartnerClient is a partner credential's record. The token itself is never
// stored: only its keyed hash.
type PartnerClient struct {
	ID        string
	Name      string
	Scopes    []bokat.Scope
	CreatedAt time.Time
	// Mode is the realm of the credential (empty: live).
	Mode bokat.Mode
	// Previous reports that the lookup matched the token a rotation
	// replaced, still valid during the rotation's overlap.
	Previous bool
}

// ProviderTokenStore is what provider token authentication needs of the
// database.
type ProviderTokenStore interface {
	// CreateProviderToken stores a provider token with the keyed hash of
	// its secret; an unknown provider is bokat.ErrNotFound.
	CreateProviderToken(ctx context.Context, t ProviderToken, tokenHash string) error
	// ProviderTokenByHash returns the unrevoked provider token with the
	// hash, or bokat.ErrNotFound.
	ProviderTokenByHash(ctx context.Context, tokenHash string) (ProviderToken, error)
}

// ProviderToken is a provider API credential's record: which provider it
// acts for and with which provider scopes. The secret is never stored.
type ProviderToken struct {
	ID         string
	ProviderID string
	Name       string
	Scopes     []bokat.Scope
	CreatedAt  time.Time
}
