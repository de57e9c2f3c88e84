package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"bokat"
	"bokat/internal/oauth"
)

var (
	_ oauth.Store = Bound[oauth.Tx]{}
	_ oauth.Tx    = (*Tx)(nil)
)

func registrationOf(c oauth.Client) string {
	if c.Registration == "" {
		return oauth.ClientOperator
	}
	return c.Registration
}

// CreateOAuthClient stores a client. Redirect URIs must not contain
// whitespace (they are stored space-separated).
func (db *DB) CreateOAuthClient(ctx context.Context, c oauth.Client) error {
	var secret sql.NullString
	if c.SecretHash != "" {
		secret = sql.NullString{String: c.SecretHash, Valid: true}
	}
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx,
			`INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, scopes, registration, created_at, mode)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			c.ID, c.Name, secret, strings.Join(c.RedirectURIs, " "), joinScopes(c.Scopes), registrationOf(c), Millis(c.CreatedAt),
			string(c.Mode.Or()))
		return translate(err)
	})
}

// PutMetadataClient stores or refreshes the public client of a Client ID
// Metadata Document (its id is the document's URL) and returns it as
// stored. A revoked client stays revoked: it returns bokat.ErrNotFound, and
// so does an id already held by a client registered another way.
func (db *DB) PutMetadataClient(ctx context.Context, c oauth.Client) (oauth.Client, error) {
	err := db.InTx(ctx, func(tx *Tx) error {
		return affectedOne(tx.tx.ExecContext(ctx,
			`INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, scopes, registration, created_at)
			 VALUES ($1, $2, NULL, $3, $4, 'metadata', $5)
			 ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris,
			        scopes = excluded.scopes
			  WHERE oauth_clients.revoked_at IS NULL AND oauth_clients.registration = 'metadata'`,
			c.ID, c.Name, strings.Join(c.RedirectURIs, " "), joinScopes(c.Scopes), Millis(c.CreatedAt)))
	})
	if err != nil {
		return oauth.Client{}, err
	}
	return db.OAuthClient(ctx, c.ID)
}

// OAuthClient returns the active client with the id, or bokat.ErrNotFound.
func (db *DB) OAuthClient(ctx context.Context, id string) (oauth.Client, error) {
	var (
		c        oauth.Client
		secret   sql.NullString
		uris     string
		scopes   string
		creation int64
	)
	err := db.read.QueryRowContext(ctx,
		`SELECT id, name, secret_hash, redirect_uris, scopes, registration, created_at, mode
		   FROM oauth_clients WHERE id = $1 AND revoked_at IS NULL`, id).
		Scan(&c.ID, &c.Name, &secret, &uris, &scopes, &c.Registration, &creation, &c.Mode)
	if err != nil {
		return oauth.Client{}, translate(err)
	}
	c.SecretHash = secret.String
	c.RedirectURIs = strings.Fields(uris)
	c.Scopes = splitScopes(scopes)
	c.CreatedAt = FromMillis(creation)
	return c, nil
}

// SignInCodesSince counts the codes sent to the e-mail (by its hash) since
// the instant, for the per-address send limit.
func (tx *Tx) SignInCodesSince(ctx context.Context, emailHash string, since time.Time) (int, error) {
	var n int
	err := tx.tx.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM oauth_signin_codes WHERE email_hash = $1 AND created_at >= $2`,
		emailHash, Millis(since)).Scan(&n)
	return n, translate(err)
}

// InsertSignInCode stores a new sign-in code.
func (tx *Tx) InsertSignInCode(ctx context.Context, c oauth.SignInCode) error {
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO oauth_signin_codes (id, email, email_hash, browser_hash, code_hash, attempts, created_at, expires_at)
		 VALUES ($1, $2, $3, $4, $5, 0, $6, $7)`,
		c.ID, c.Email, c.EmailHash, c.BrowserHash, c.CodeHash, Millis(c.CreatedAt), Millis(c.ExpiresAt))
	return translate(err)
}

// SpendSignInAttempt counts one attempt against the code and returns it
// with the attempts spent so far (including this one). It returns
// bokat.ErrNotFound when the code is unknown, consumed, expired, or has no
// attempt left. The increment is atomic on both engines.
func (tx *Tx) SpendSignInAttempt(ctx context.Context, id string, maxAttempts int, now time.Time) (oauth.SignInCode, error) {
	c := oauth.SignInCode{ID: id}
	var created, expires int64
	err := tx.tx.QueryRowContext(ctx,
		`UPDATE oauth_signin_codes SET attempts = attempts + 1
		  WHERE id = $1 AND consumed_at IS NULL AND expires_at > $2 AND attempts < $3
		 RETURNING email, email_hash, browser_hash, code_hash, attempts, created_at, expires_at`,
		id, Millis(now), maxAttempts).
		Scan(&c.Email, &c.EmailHash, &c.BrowserHash, &c.CodeHash, &c.Attempts, &created, &expires)
	if err != nil {
		return oauth.SignInCode{}, translate(err)
	}
	c.CreatedAt, c.ExpiresAt = FromMillis(created), FromMillis(expires)
	return c, nil
}

// ConsumeSignInCode marks the code used; it returns bokat.ErrNotFound when
// it already was.
func (tx *Tx) ConsumeSignInCode(ctx context.Context, id string, now time.Time) error {
	return affectedOne(tx.tx.ExecContext(ctx,
		`UPDATE oauth_signin_codes SET consumed_at = $2 WHERE id = $1 AND consumed_at IS NULL`, id, Millis(now)))
}

// SignInUser returns the id of the user with the (normalised) e-mail,
// creating the user with newID when none exists, and records the sign-in.
func (tx *Tx) SignInUser(ctx context.Context, newID, email string, now time.Time) (string, error) {
	var id string
	err := tx.tx.QueryRowContext(ctx,
		`INSERT INTO users (id, email, created_at, last_sign_in_at) VALUES ($1, $2, $3, $3)
		 ON CONFLICT (email) DO UPDATE SET last_sign_in_at = excluded.last_sign_in_at
		 RETURNING id`, newID, email, Millis(now)).Scan(&id)
	return id, translate(err)
}

// InsertSession stores a signed-in browser session under the keyed hash of
// its cookie.
func (tx *Tx) InsertSession(ctx context.Context, tokenHash, userID string, created, expires time.Time) error {
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO oauth_sessions (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		tokenHash, userID, Millis(created), Millis(expires))
	return translate(err)
}

// Session returns the user of an unexpired browser session, or
// bokat.ErrNotFound.
func (db *DB) Session(ctx context.Context, tokenHash string, now time.Time) (userID, email string, err error) {
	err = db.read.QueryRowContext(ctx,
		`SELECT u.id, u.email FROM oauth_sessions s JOIN users u ON u.id = s.user_id
		  WHERE s.token_hash = $1 AND s.expires_at > $2`, tokenHash, Millis(now)).Scan(&userID, &email)
	return userID, email, translate(err)
}

// DeleteSession ends a browser session; ending an unknown one is no error.
func (db *DB) DeleteSession(ctx context.Context, tokenHash string) error {
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx, `DELETE FROM oauth_sessions WHERE token_hash = $1`, tokenHash)
		return err
	})
}

// InsertGrant stores a grant with its authorization code.
func (tx *Tx) InsertGrant(ctx context.Context, g oauth.Grant) error {
	given := 0
	if g.RedirectURIGiven {
		given = 1
	}
	if g.Audience == "" {
		return errors.New("insert grant: no audience")
	}
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO oauth_grants (id, client_id, user_id, scopes, code_hash, redirect_uri, redirect_uri_given,
		        code_challenge, audience, code_expires_at, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		g.ID, g.ClientID, g.UserID, joinScopes(g.Scopes), g.CodeHash, g.RedirectURI, given,
		g.CodeChallenge, string(g.Audience), Millis(g.CodeExpiresAt), Millis(g.CreatedAt))
	return translate(err)
}

const grantColumns = `g.id, g.client_id, g.user_id, g.scopes, g.code_hash, g.redirect_uri, g.redirect_uri_given,
	g.code_challenge, g.audience, g.code_expires_at, g.code_used_at, g.created_at, g.revoked_at`

// grantRow scans the grantColumns into an oauth.Grant.
type grantRow struct {
	g        *oauth.Grant
	scopes   string
	given    int
	audience string
	codeExp  int64
	codeUsed sql.NullInt64
	created  int64
	revoked  sql.NullInt64
}

func (r *grantRow) targets() []any {
	g := r.g
	return []any{&g.ID, &g.ClientID, &g.UserID, &r.scopes, &g.CodeHash, &g.RedirectURI, &r.given,
		&g.CodeChallenge, &r.audience, &r.codeExp, &r.codeUsed, &r.created, &r.revoked}
}

func (r *grantRow) finish() {
	g := r.g
	g.Scopes = splitScopes(r.scopes)
	g.RedirectURIGiven = r.given != 0
	g.Audience = bokat.Audience(r.audience)
	g.CodeExpiresAt = FromMillis(r.codeExp)
	g.CodeUsedAt = FromNullMillis(r.codeUsed)
	g.CreatedAt = FromMillis(r.created)
	g.RevokedAt = FromNullMillis(r.revoked)
}

// GrantByCodeHash returns the grant of an authorization code, or
// bokat.ErrNotFound.
func (tx *Tx) GrantByCodeHash(ctx context.Context, codeHash string) (oauth.Grant, error) {
	var g oauth.Grant
	row := grantRow{g: &g}
	err := tx.tx.QueryRowContext(ctx, `SELECT `+grantColumns+` FROM oauth_grants g WHERE g.code_hash = $1`, codeHash).
		Scan(row.targets()...)
	if err != nil {
		return oauth.Grant{}, translate(err)
	}
	row.finish()
	return g, nil
}

// MarkCodeUsed records the first use of the grant's code. It returns false
// when the code had already been used (a replay), atomically on both engines.
func (tx *Tx) MarkCodeUsed(ctx context.Context, grantID string, now time.Time) (bool, error) {
	err := affectedOne(tx.tx.ExecContext(ctx,
		`UPDATE oauth_grants SET code_used_at = $2 WHERE id = $1 AND code_used_at IS NULL`, grantID, Millis(now)))
	if err == nil {
		return true, nil
	}
	if isNotFound(err) {
		return false, nil
	}
	return false, err
}

// RevokeGrant revokes the grant and every token issued under it (the token
// family). Revoking a revoked grant keeps its first revocation.
func (tx *Tx) RevokeGrant(ctx context.Context, grantID, reason string, now time.Time) error {
	if _, err := tx.tx.ExecContext(ctx,
		`UPDATE oauth_grants SET revoked_at = $2, revoke_reason = $3 WHERE id = $1 AND revoked_at IS NULL`,
		grantID, Millis(now), reason); err != nil {
		return translate(err)
	}
	_, err := tx.tx.ExecContext(ctx,
		`UPDATE oauth_tokens SET revoked_at = $2 WHERE grant_id = $1 AND revoked_at IS NULL`, grantID, Millis(now))
	return translate(err)
}

// InsertToken stores a token.
func (tx *Tx) InsertToken(ctx context.Context, t oauth.Token) error {
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, created_at, expires_at)
		 VALUES ($1, $2, $3, $4, $5, $6)`,
		t.Hash, t.Kind, t.GrantID, joinScopes(t.Scopes), Millis(t.CreatedAt), Millis(t.ExpiresAt))
	return translate(err)
}

func tokenByHash(ctx context.Context, q Reader, kind, hash string) (oauth.TokenGrant, error) {
	var (
		out              oauth.TokenGrant
		t                = &out.Token
		scopes           string
		created, expires int64
		used, revoked    sql.NullInt64
		clientRevoked    sql.NullInt64
		grant            = grantRow{g: &out.Grant}
	)
	targets := append([]any{&t.Hash, &t.Kind, &t.GrantID, &scopes, &created, &expires, &used, &revoked, &clientRevoked,
		&out.ClientMode}, grant.targets()...)
	err := q.QueryRowContext(ctx,
		`SELECT t.token_hash, t.kind, t.grant_id, t.scopes, t.created_at, t.expires_at, t.used_at, t.revoked_at,
		        c.revoked_at, c.mode, `+grantColumns+`
		   FROM oauth_tokens t
		   JOIN oauth_grants g ON g.id = t.grant_id
		   JOIN oauth_clients c ON c.id = g.client_id
		  WHERE t.token_hash = $1 AND t.kind = $2`, hash, kind).Scan(targets...)
	if err != nil {
		return oauth.TokenGrant{}, translate(err)
	}
	grant.finish()
	t.Scopes = splitScopes(scopes)
	t.CreatedAt, t.ExpiresAt = FromMillis(created), FromMillis(expires)
	t.UsedAt, t.RevokedAt = FromNullMillis(used), FromNullMillis(revoked)
	out.ClientActive = !clientRevoked.Valid
	return out, nil
}

// OAuthToken returns the token of the kind with the hash, with its grant,
// or bokat.ErrNotFound. It reads from the read pool.
func (db *DB) OAuthToken(ctx context.Context, kind, hash string) (oauth.TokenGrant, error) {
	return tokenByHash(ctx, db.read, kind, hash)
}

// OAuthToken returns the token of the kind with the hash, with its grant,
// inside the transaction, or bokat.ErrNotFound.
func (tx *Tx) OAuthToken(ctx context.Context, kind, hash string) (oauth.TokenGrant, error) {
	return tokenByHash(ctx, tx.tx, kind, hash)
}

// MarkRefreshUsed records the rotation of a refresh token. It returns false
// when the token had already been used (a replay), atomically on both
// engines.
func (tx *Tx) MarkRefreshUsed(ctx context.Context, hash string, now time.Time) (bool, error) {
	err := affectedOne(tx.tx.ExecContext(ctx,
		`UPDATE oauth_tokens SET used_at = $2 WHERE token_hash = $1 AND kind = 'refresh' AND used_at IS NULL`,
		hash, Millis(now)))
	if err == nil {
		return true, nil
	}
	if isNotFound(err) {
		return false, nil
	}
	return false, err
}

// RevokeToken revokes one token.
func (tx *Tx) RevokeToken(ctx context.Context, hash string, now time.Time) error {
	_, err := tx.tx.ExecContext(ctx,
		`UPDATE oauth_tokens SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL`, hash, Millis(now))
	return translate(err)
}

// PurgeOAuth deletes what can no longer be used: sign-in codes and
// sessions past their expiry, tokens expired for more than a day, and
// grants whose code expired more than a day ago and which have no token
// left. Refresh tokens stay until they expire, so that a replay of a rotated
// one is recognised (and revokes its family) for as long as it could have
// been valid.
func (db *DB) PurgeOAuth(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	dayAgo := Millis(now.Add(-24 * time.Hour))
	err := db.InTx(ctx, func(tx *Tx) error {
		for _, q := range []struct {
			sql string
			arg int64
		}{
			{`DELETE FROM oauth_signin_codes WHERE expires_at < $1`, Millis(now)},
			{`DELETE FROM oauth_sessions WHERE expires_at < $1`, Millis(now)},
			{`DELETE FROM oauth_tokens WHERE expires_at < $1`, dayAgo},
			{`DELETE FROM oauth_grants WHERE code_expires_at < $1
			     AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = oauth_grants.id)`, dayAgo},
		} {
			res, err := tx.tx.ExecContext(ctx, q.sql, q.arg)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			total += n
		}
		return nil
	})
	return total, err
}

// affectedOne turns an Exec result into nil when exactly one row changed
// and bokat.ErrNotFound when none did.
func affectedOne(res sql.Result, err error) error {
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return bokat.ErrNotFound
	}
	return nil
}

func isNotFound(err error) bool { return errors.Is(err, bokat.ErrNotFound) }
