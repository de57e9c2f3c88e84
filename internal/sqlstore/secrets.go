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

// PartnerClientByTokenHash finds the active partner client whose token has
// the given keyed hash, or returns bokat.ErrNotFound.
func (db *DB) PartnerClientByTokenHash(ctx context.Context, tokenHash string) (auth.PartnerClient, error) {
	var (
		c       auth.PartnerClient
		scopes  string
		created int64
	)
	err := db.read.QueryRowContext(ctx,
		`SELECT id, name, scopes, created_at, mode FROM partner_clients WHERE token_hash = $1 AND revoked_at IS NULL`,
		tokenHash).Scan(&c.ID, &c.Name, &scopes, &created, &c.Mode)
	if err != nil {
		return auth.PartnerClient{}, translate(err)
	}
	c.Scopes = splitScopes(scopes)
	c.CreatedAt = FromMillis(created)
	return c, nil
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
