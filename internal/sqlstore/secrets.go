package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"bokat"
	"bokat/internal/auth"
)

// DevelopmentSecret returns the named development secret, creating it with
// generate when it does not exist yet, so that tokens issued in development
// stay valid across restarts. Production never calls this: its secrets come
// from configuration.
func (db *DB) DevelopmentSecret(ctx context.Context, name string, generate func() (string, error)) (string, error) {
	var value string
	err := db.read.QueryRowContext(ctx, `SELECT value FROM server_secrets WHERE name = $1`, name).Scan(&value)
	if err == nil {
		return value, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", translate(err)
	}
	fresh, err := generate()
	if err != nil {
		return "", err
	}
	err = db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx,
			`INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
			name, fresh, Millis(time.Now()))
		if err != nil {
			return err
		}
		return tx.tx.QueryRowContext(ctx, `SELECT value FROM server_secrets WHERE name = $1`, name).Scan(&value)
	})
	if err != nil {
		return "", fmt.Errorf("store development secret %s: %w", name, err)
	}
	return value, nil
}

var _ auth.Store = (*DB)(nil)

// CreatePartnerClient stores a partner client with the keyed hash of its token.
func (db *DB) CreatePartnerClient(ctx context.Context, c auth.PartnerClient, tokenHash string) error {
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx,
			`INSERT INTO partner_clients (id, name, token_hash, scopes, created_at, mode) VALUES ($1, $2, $3, $4, $5, $6)`,
			c.ID, c.Name, tokenHash, joinScopes(c.Scopes), Millis(c.CreatedAt), string(c.Mode.Or()))
		return err
	})
}

// PartnerClientByTokenHash finds the unrevoked partner client whose
// current token has the keyed hash, or whose replaced token has it and is
// valid at now (a rotation's overlap), or returns bokat.ErrNotFound. Both
// columns are indexed; the two lookups are one statement.
func (db *DB) PartnerClientByTokenHash(ctx context.Context, tokenHash string, now time.Time) (auth.PartnerClient, error) {
	var (
		c        auth.PartnerClient
		scopes   string
		created  int64
		previous int
	)
	err := db.read.QueryRowContext(ctx,
		`SELECT id, name, scopes, created_at, mode, 0 FROM partner_clients WHERE token_hash = $1 AND revoked_at IS NULL
		 UNION ALL
		 SELECT id, name, scopes, created_at, mode, 1 FROM partner_clients
		  WHERE previous_token_hash = $1 AND previous_token_expires_at > $2 AND revoked_at IS NULL`,
		tokenHash, Millis(now)).Scan(&c.ID, &c.Name, &scopes, &created, &c.Mode, &previous)
	if err != nil {
		return auth.PartnerClient{}, translate(err)
	}
	c.Scopes = splitScopes(scopes)
	c.CreatedAt = FromMillis(created)
	c.Previous = previous == 1
	return c, nil
}

var _ auth.UsageStore = (*DB)(nil)

// usageStatements set a credential's last use unless the stored time is
// later than $3 (the use minus auth.UsageInterval): then no row changes,
// so however many processes and requests use a credential, its row is
// written at most once per interval.
var usageStatements = map[auth.CredentialKind]string{
	auth.UsePartner: `UPDATE partner_clients SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`,
	auth.UsePartnerPrevious: `UPDATE partner_clients SET previous_token_last_used_at = $2,
		last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < $2 THEN $2 ELSE last_used_at END
		WHERE id = $1 AND (previous_token_last_used_at IS NULL OR previous_token_last_used_at <= $3)`,
	auth.UseProviderToken: `UPDATE provider_tokens SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`,
	auth.UseOAuthClient: `UPDATE oauth_clients SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`,
}

// RecordCredentialUse sets the credential's last-used time to at, unless
// it was set less than auth.UsageInterval before at.
func (db *DB) RecordCredentialUse(ctx context.Context, kind auth.CredentialKind, id string, at time.Time) error {
	q, ok := usageStatements[kind]
	if !ok {
		return fmt.Errorf("record credential use: unknown kind %q", kind)
	}
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx, q, id, Millis(at), Millis(at.Add(-auth.UsageInterval)))
		return err
	})
}

// PartnerClientCount returns how many active live partner clients exist
// (a test credential does not configure production).
func (db *DB) PartnerClientCount(ctx context.Context) (int, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM partner_clients WHERE revoked_at IS NULL AND mode = 'live'`).Scan(&n)
	return n, translate(err)
}

func joinScopes(scopes []bokat.Scope) string {
	b := make([]byte, 0, 256)
	for i, s := range scopes {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, s...)
	}
	return string(b)
}

func splitScopes(s string) []bokat.Scope {
	var out []bokat.Scope
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if i > start {
				out = append(out, bokat.Scope(s[start:i]))
			}
			start = i + 1
		}
	}
	return out
}
