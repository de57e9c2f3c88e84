package oauth

import (
	"context"
	"time"

	"bokat"
	"bokat/internal/web"
)

// Store is what the authorization server needs of the database.
type Store interface {
	InTx(ctx context.Context, fn func(Tx) error) error
	ClientStore
	OAuthClient(ctx context.Context, id string) (Client, error)
	PutMetadataClient(ctx context.Context, c Client) (Client, error)
	Session(ctx context.Context, tokenHash string, now time.Time) (userID, email string, err error)
	DeleteSession(ctx context.Context, tokenHash string) error
	OAuthToken(ctx context.Context, kind, hash string) (TokenGrant, error)
	PurgeOAuth(ctx context.Context, now time.Time) (int64, error)
}

// ClientStore is what client registration needs of the store.
type ClientStore interface {
	CreateOAuthClient(ctx context.Context, c Client) error
}

// Tx is what the authorization server does inside one write transaction.
// Lookups that find nothing return bokat.ErrNotFound.
type Tx interface {
	web.CodeTx
	// SignInUser returns the id of the user with the e-mail, creating the
	// user with newID when none exists, and records the sign-in.
	SignInUser(ctx context.Context, newID, email string, now time.Time) (string, error)
	InsertSession(ctx context.Context, tokenHash, userID string, created, expires time.Time) error

	InsertGrant(ctx context.Context, g Grant) error
	GrantByCodeHash(ctx context.Context, codeHash string) (Grant, error)
	// MarkCodeUsed records the first use of the grant's code; false means
	// it had been used already (a replay).
	MarkCodeUsed(ctx context.Context, grantID string, now time.Time) (bool, error)
	// RevokeGrant revokes the grant and every token issued under it.
	RevokeGrant(ctx context.Context, grantID, reason string, now time.Time) error

	InsertToken(ctx context.Context, t Token) error
	OAuthToken(ctx context.Context, kind, hash string) (TokenGrant, error)
	// MarkRefreshUsed records the rotation of a refresh token; false means
	// it had been used already (a replay).
	MarkRefreshUsed(ctx context.Context, hash string, now time.Time) (bool, error)
	RevokeToken(ctx context.Context, hash string, now time.Time) error
}

// Client is a registered OAuth client. Its secret is never stored: only
// its keyed hash, and a public client has none.
type Client struct {
	ID   string
	Name string
	// SecretHash is empty for a public client.
	SecretHash   string
	RedirectURIs []string
	Scopes       []bokat.Scope
	// Registration says how the client was registered (ClientOperator,
	// ClientDynamic or ClientMetadata); empty means ClientOperator.
	Registration string
	CreatedAt    time.Time
	// Mode is the client's realm (empty: live): its access tokens start
	// with bokat.AccessTestTokenPrefix in the test realm, and its
	// principals are of its realm.
	Mode bokat.Mode
}

// How OAuth clients are registered.
const (
	ClientOperator = "operator"
	ClientDynamic  = "dynamic"
	ClientMetadata = "metadata"
)

// Public reports whether the client has no secret.
func (c Client) Public() bool { return c.SecretHash == "" }

// SignInCode is a one-time e-mail sign-in code, stored hashed.
type SignInCode = web.SignInCode

// Grant is what a user approved for a client: the authorization code
// (hashed, single use) and the family of tokens issued from it.
type Grant struct {
	ID               string
	ClientID         string
	UserID           string
	Scopes           []bokat.Scope
	CodeHash         string
	RedirectURI      string
	RedirectURIGiven bool
	CodeChallenge    string
	// Audience is the resource the grant's tokens are for (RFC 8707).
	Audience      bokat.Audience
	CodeExpiresAt time.Time
	CodeUsedAt    time.Time // zero while unused
	CreatedAt     time.Time
	RevokedAt     time.Time // zero while active
}

// Token kinds.
const (
	TokenAccess  = "access"
	TokenRefresh = "refresh"
)

// Token is an access or refresh token, stored under its keyed hash.
type Token struct {
	Hash      string
	Kind      string // TokenAccess or TokenRefresh
	GrantID   string
	Scopes    []bokat.Scope
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time // refresh tokens: when rotated; zero while unused
	RevokedAt time.Time // zero while not revoked
}

// TokenGrant is a token with its grant and whether its client is still
// active.
type TokenGrant struct {
	Token        Token
	Grant        Grant
	ClientActive bool
	// ClientMode is the realm of the grant's client.
	ClientMode bokat.Mode
}
