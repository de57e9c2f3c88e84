package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"bokat"
	"bokat/internal/credentials"
	"bokat/internal/oauth"
)

var (
	_ credentials.Store = Bound[credentials.Tx]{}
	_ credentials.Tx    = (*Tx)(nil)
)

const partnerCredentialColumns = `id, name, mode, scopes, created_at, rotated_at, last_used_at,
	previous_token_expires_at, previous_token_last_used_at, revoked_at`

func scanPartner(row interface{ Scan(...any) error }) (credentials.Partner, error) {
	var (
		p                                  credentials.Partner
		mode, scopes                       string
		created                            int64
		rotated, used, prevUntil, prevUsed sql.NullInt64
		revoked                            sql.NullInt64
	)
	if err := row.Scan(&p.ID, &p.Name, &mode, &scopes, &created, &rotated, &used, &prevUntil, &prevUsed, &revoked); err != nil {
		return credentials.Partner{}, translate(err)
	}
	p.Mode, p.Scopes = bokat.Mode(mode), splitScopes(scopes)
	p.CreatedAt, p.RotatedAt, p.LastUsedAt = FromMillis(created), FromNullMillis(rotated), FromNullMillis(used)
	p.PreviousValidUntil, p.PreviousLastUsedAt, p.RevokedAt = FromNullMillis(prevUntil), FromNullMillis(prevUsed), FromNullMillis(revoked)
	return p, nil
}

// PartnerCredentials returns every partner credential, oldest first.
func (db *DB) PartnerCredentials(ctx context.Context) ([]credentials.Partner, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+partnerCredentialColumns+` FROM partner_clients ORDER BY created_at, id`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []credentials.Partner
	for rows.Next() {
		p, err := scanPartner(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, translate(rows.Err())
}

// InsertPartnerClient stores a new partner credential under the keyed hash
// of its token.
func (tx *Tx) InsertPartnerClient(ctx context.Context, p credentials.Partner, tokenHash string) error {
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO partner_clients (id, name, token_hash, scopes, created_at, mode) VALUES ($1, $2, $3, $4, $5, $6)`,
		p.ID, p.Name, tokenHash, joinScopes(p.Scopes), Millis(p.CreatedAt), string(p.Mode.Or()))
	return translate(err)
}

// PartnerCredential returns the partner credential with the id, or
// bokat.ErrNotFound. The row is held until the transaction ends, so a
// rotation or revocation decides on what it read (a rotation that checks
// the last rotation it was shown cannot race another).
func (tx *Tx) PartnerCredential(ctx context.Context, id string) (credentials.Partner, error) {
	return scanPartner(tx.tx.QueryRowContext(ctx, `SELECT `+partnerCredentialColumns+` FROM partner_clients WHERE id = $1`+tx.forUpdate(), id))
}

// RotatePartnerToken makes newHash the credential's token; the replaced
// token stays valid until previousUntil (zero: not at all). One statement:
// on PostgreSQL a concurrent rotation waits for the row and then replaces
// this one's token in turn.
func (tx *Tx) RotatePartnerToken(ctx context.Context, id, newHash string, previousUntil, now time.Time) error {
	if previousUntil.IsZero() {
		return affectedOne(tx.tx.ExecContext(ctx,
			`UPDATE partner_clients SET token_hash = $2, rotated_at = $3, previous_token_hash = NULL,
			        previous_token_expires_at = NULL, previous_token_last_used_at = NULL
			  WHERE id = $1 AND revoked_at IS NULL`, id, newHash, Millis(now)))
	}
	return affectedOne(tx.tx.ExecContext(ctx,
		`UPDATE partner_clients SET previous_token_hash = token_hash, previous_token_expires_at = $4,
		        previous_token_last_used_at = NULL, token_hash = $2, rotated_at = $3
		  WHERE id = $1 AND revoked_at IS NULL`, id, newHash, Millis(now), Millis(previousUntil)))
}

// RevokePartner revokes the credential; a revoked or unknown one is
// bokat.ErrNotFound.
func (tx *Tx) RevokePartner(ctx context.Context, id string, now time.Time) error {
	return affectedOne(tx.tx.ExecContext(ctx,
		`UPDATE partner_clients SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, Millis(now)))
}

const oauthClientCredentialColumns = `id, name, registration, mode, secret_hash IS NULL, scopes, redirect_uris,
	created_at, last_used_at, revoked_at`

func scanOAuthClient(row interface{ Scan(...any) error }) (credentials.OAuthClient, error) {
	var (
		c                  credentials.OAuthClient
		mode, scopes, uris string
		public             bool
		created            int64
		used, revoked      sql.NullInt64
	)
	if err := row.Scan(&c.ID, &c.Name, &c.Registration, &mode, &public, &scopes, &uris, &created, &used, &revoked); err != nil {
		return credentials.OAuthClient{}, translate(err)
	}
	c.Mode, c.Public, c.Scopes, c.RedirectURIs = bokat.Mode(mode), public, splitScopes(scopes), strings.Fields(uris)
	c.CreatedAt, c.LastUsedAt, c.RevokedAt = FromMillis(created), FromNullMillis(used), FromNullMillis(revoked)
	return c, nil
}

// OAuthClientCredentials returns every OAuth client, oldest first.
func (db *DB) OAuthClientCredentials(ctx context.Context) ([]credentials.OAuthClient, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+oauthClientCredentialColumns+` FROM oauth_clients ORDER BY created_at, id`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []credentials.OAuthClient
	for rows.Next() {
		c, err := scanOAuthClient(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, translate(rows.Err())
}

// CreateOAuthClient stores a client inside the transaction.
func (tx *Tx) CreateOAuthClient(ctx context.Context, c oauth.Client) error {
	var secret sql.NullString
	if c.SecretHash != "" {
		secret = sql.NullString{String: c.SecretHash, Valid: true}
	}
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, scopes, registration, created_at, mode)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.ID, c.Name, secret, strings.Join(c.RedirectURIs, " "), joinScopes(c.Scopes), registrationOf(c), Millis(c.CreatedAt),
		string(c.Mode.Or()))
	return translate(err)
}

// OAuthClientCredential returns the OAuth client with the id, revoked or
// not, or bokat.ErrNotFound.
func (tx *Tx) OAuthClientCredential(ctx context.Context, id string) (credentials.OAuthClient, error) {
	return scanOAuthClient(tx.tx.QueryRowContext(ctx, `SELECT `+oauthClientCredentialColumns+` FROM oauth_clients WHERE id = $1`, id))
}

// RevokeOAuthClient revokes the client, its unrevoked grants (reason
// "client_revoked") and their unrevoked tokens, and returns how many
// grants it revoked.
func (tx *Tx) RevokeOAuthClient(ctx context.Context, id string, now time.Time) (int, error) {
	if err := affectedOne(tx.tx.ExecContext(ctx,
		`UPDATE oauth_clients SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, Millis(now))); err != nil {
		return 0, err
	}
	if _, err := tx.tx.ExecContext(ctx,
		`UPDATE oauth_tokens SET revoked_at = $2
		  WHERE revoked_at IS NULL AND grant_id IN (SELECT g.id FROM oauth_grants g WHERE g.client_id = $1)`,
		id, Millis(now)); err != nil {
		return 0, translate(err)
	}
	res, err := tx.tx.ExecContext(ctx,
		`UPDATE oauth_grants SET revoked_at = $2, revoke_reason = 'client_revoked' WHERE client_id = $1 AND revoked_at IS NULL`,
		id, Millis(now))
	if err != nil {
		return 0, translate(err)
	}
	n, err := res.RowsAffected()
	return int(n), translate(err)
}

// PurgeableDynamicClients returns up to limit dynamically registered
// clients last used (never used: created) at or before unusedSince that
// hold no token valid at now (unrevoked, unexpired, of an unrevoked
// grant), oldest first.
func (tx *Tx) PurgeableDynamicClients(ctx context.Context, unusedSince, now time.Time, limit int) ([]string, error) {
	rows, err := tx.tx.QueryContext(ctx,
		`SELECT c.id FROM oauth_clients c
		  WHERE c.registration = 'dynamic' AND COALESCE(c.last_used_at, c.created_at) <= $1
		    AND NOT EXISTS (SELECT 1 FROM oauth_grants g JOIN oauth_tokens t ON t.grant_id = g.id
		                     WHERE g.client_id = c.id AND g.revoked_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > $2)
		  ORDER BY COALESCE(c.last_used_at, c.created_at), c.id
		  LIMIT $3`, Millis(unusedSince), Millis(now), limit)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, translate(err)
		}
		ids = append(ids, id)
	}
	return ids, translate(rows.Err())
}

// DeleteOAuthClient deletes the client with its grants and their tokens.
func (tx *Tx) DeleteOAuthClient(ctx context.Context, id string) error {
	for _, q := range []string{
		`DELETE FROM oauth_tokens WHERE grant_id IN (SELECT g.id FROM oauth_grants g WHERE g.client_id = $1)`,
		`DELETE FROM oauth_grants WHERE client_id = $1`,
	} {
		if _, err := tx.tx.ExecContext(ctx, q, id); err != nil {
			return translate(err)
		}
	}
	return affectedOne(tx.tx.ExecContext(ctx, `DELETE FROM oauth_clients WHERE id = $1`, id))
}

// InsertOperatorAudit appends one operator audit record; its details are
// stored as a JSON object.
func (tx *Tx) InsertOperatorAudit(ctx context.Context, r credentials.AuditRecord) error {
	details := r.Details
	if details == nil {
		details = map[string]string{}
	}
	raw, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("operator audit details: %w", err)
	}
	_, err = tx.tx.ExecContext(ctx,
		`INSERT INTO operator_audit (id, at, actor, action, object_kind, object_id, details) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.ID, Millis(r.At), r.Actor, r.Action, r.ObjectKind, r.ObjectID, string(raw))
	return translate(err)
}

// OperatorAudit returns audit records, newest first, as q selects.
func (db *DB) OperatorAudit(ctx context.Context, q credentials.AuditQuery) ([]credentials.AuditRecord, error) {
	before := int64(1<<63 - 1)
	if !q.Before.IsZero() {
		before = Millis(q.Before)
	}
	query := `SELECT id, at, actor, action, object_kind, object_id, details FROM operator_audit WHERE at < $1`
	args := []any{before}
	if q.ObjectKind != "" {
		query += ` AND object_kind = $3 AND object_id = $4`
		args = append(args, q.Limit, q.ObjectKind, q.ObjectID)
	} else {
		args = append(args, q.Limit)
	}
	rows, err := db.read.QueryContext(ctx, query+` ORDER BY at DESC, id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []credentials.AuditRecord
	for rows.Next() {
		var (
			r       credentials.AuditRecord
			at      int64
			details string
		)
		if err := rows.Scan(&r.ID, &at, &r.Actor, &r.Action, &r.ObjectKind, &r.ObjectID, &details); err != nil {
			return nil, translate(err)
		}
		r.At = FromMillis(at)
		if err := json.Unmarshal([]byte(details), &r.Details); err != nil {
			return nil, fmt.Errorf("operator audit %s: details: %w", r.ID, err)
		}
		out = append(out, r)
	}
	return out, translate(rows.Err())
}

const providerTokenColumns = `id, provider_id, name, scopes, created_at, last_used_at, revoked_at`

func scanProviderToken(row interface{ Scan(...any) error }) (credentials.ProviderToken, error) {
	var (
		t             credentials.ProviderToken
		scopes        string
		created       int64
		used, revoked sql.NullInt64
	)
	if err := row.Scan(&t.ID, &t.ProviderID, &t.Name, &scopes, &created, &used, &revoked); err != nil {
		return credentials.ProviderToken{}, translate(err)
	}
	t.Scopes, t.CreatedAt, t.LastUsedAt, t.RevokedAt = splitScopes(scopes), FromMillis(created), FromNullMillis(used), FromNullMillis(revoked)
	return t, nil
}

// ProviderTokens returns the provider's API tokens, revoked ones included,
// oldest first.
func (db *DB) ProviderTokens(ctx context.Context, providerID string) ([]credentials.ProviderToken, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+providerTokenColumns+` FROM provider_tokens WHERE provider_id = $1
		ORDER BY created_at, id`, providerID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []credentials.ProviderToken
	for rows.Next() {
		t, err := scanProviderToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, translate(rows.Err())
}

// ProviderTokenCredential returns the provider API token with the id (held
// until the transaction ends), or bokat.ErrNotFound.
func (tx *Tx) ProviderTokenCredential(ctx context.Context, id string) (credentials.ProviderToken, error) {
	return scanProviderToken(tx.tx.QueryRowContext(ctx, `SELECT `+providerTokenColumns+` FROM provider_tokens WHERE id = $1`+tx.forUpdate(), id))
}

// RevokeProviderToken revokes the token; a revoked or unknown one is
// bokat.ErrNotFound.
func (tx *Tx) RevokeProviderToken(ctx context.Context, id string, now time.Time) error {
	return affectedOne(tx.tx.ExecContext(ctx,
		`UPDATE provider_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, Millis(now)))
}
