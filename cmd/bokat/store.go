package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/sqlstore"
)

// openStore opens and migrates the configured database.
func openStore(ctx context.Context, c commonConfig) (*sqlstore.DB, error) {
	db, err := sqlstore.Open(ctx, c.Database)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// tokenHasher returns the token hasher: keyed with the configured pepper, or
// in development with a pepper generated once and kept in the database.
func tokenHasher(ctx context.Context, c commonConfig, db *sqlstore.DB) (*auth.Hasher, error) {
	var raw string
	if c.TokenPepper != "" {
		raw = c.TokenPepper
	} else if c.production() {
		return nil, fmt.Errorf("production requires BOKAT_TOKEN_PEPPER")
	} else {
		var err error
		raw, err = db.DevelopmentSecret(ctx, "token_pepper", randomKey)
		if err != nil {
			return nil, err
		}
	}
	key, err := decodeKey("token pepper", raw)
	if err != nil {
		return nil, err
	}
	return auth.NewHasher(key)
}

// optionKeyring returns the booking option keyring: the configured keys, or
// in development a key generated once and kept in the database. In
// production without keys it returns nil: the server starts, and search and
// confirmation answer 503 option_signing_not_configured.
func optionKeyring(ctx context.Context, c serveConfig, db *sqlstore.DB) (*booking.Keyring, error) {
	spec := c.OptionSigningKeys
	if spec == "" {
		if c.production() {
			return nil, nil
		}
		secret, err := db.DevelopmentSecret(ctx, "option_signing_key", randomKey)
		if err != nil {
			return nil, err
		}
		spec = "dev:" + secret
	}
	keys, err := booking.ParseKeyring(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: --option-signing-keys: %v", errUsage, err)
	}
	return keys, nil
}

// randomKey returns 32 random bytes in base64.
func randomKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}
