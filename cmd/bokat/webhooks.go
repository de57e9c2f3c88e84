package main

import (
	"context"
	"fmt"
	"strings"

	"bokat/internal/httpapi"
	"bokat/internal/sqlstore"
	"bokat/internal/webhook"
)

var _ httpapi.Webhooks = (*webhook.Service)(nil)

// secretKeyring returns the keyring of --secret-key, sealing stored secrets
// (webhook signing secrets, customer contact data): the configured keys
// (raw), or in development a key generated once and kept in db (which may
// be nil when raw is set).
func secretKeyring(ctx context.Context, c commonConfig, raw string, db *sqlstore.DB) (*webhook.Keyring, error) {
	if raw == "" {
		if err := requireSecretKey(c, raw); err != nil {
			return nil, err
		}
		var err error
		raw, err = db.DevelopmentSecret(ctx, "secret_key", randomKey)
		if err != nil {
			return nil, err
		}
	}
	keys, err := parseSecretKeys(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: --secret-key: %v", errUsage, err)
	}
	return webhook.NewKeyring(keys...)
}

// requireSecretKey refuses production without the secret key (raw);
// development generates one and keeps it in the database.
func requireSecretKey(c commonConfig, raw string) error {
	if raw == "" && c.production() {
		return fmt.Errorf("production requires BOKAT_SECRET_KEY")
	}
	return nil
}

// parseSecretKeys reads --secret-key: base64 keys of webhook.KeySize bytes,
// comma-separated. Errors name a key by its position, never its value.
func parseSecretKeys(raw string) ([][]byte, error) {
	var keys [][]byte
	for i, part := range strings.Split(raw, ",") {
		key, err := decodeKey(fmt.Sprintf("secret key %d", i+1), part)
		if err != nil {
			return nil, err
		}
		if len(key) != webhook.KeySize {
			return nil, fmt.Errorf("secret key %d must be %d bytes (base64), got %d", i+1, webhook.KeySize, len(key))
		}
		keys = append(keys, key)
	}
	return keys, nil
}
