package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/sqlstore"
	"bokat/internal/webhook"
	"bokat/internal/wire"
)

// openStore opens and migrates the configured database with the options
// (the vault for the commands that seal or open contact data:
// openSealedStore).
func openStore(ctx context.Context, c commonConfig, opts ...sqlstore.Option) (*sqlstore.DB, error) {
	return wire.OpenStore(ctx, c.Database, opts...)
}

// openSealedStore opens and migrates the configured database with the vault
// sealing customer contact data: the secretKey keyring (as for webhook
// signing secrets) and the blind index keyed with the token pepper. It
// returns the token hasher and the keyring beside the store.
//
// The store takes its vault when it is opened. In development a key that is
// not configured is generated once and kept in the database, so it is read
// first through a store of its own, closed before the sealing store opens.
func openSealedStore(ctx context.Context, c commonConfig, secretKey string) (*sqlstore.DB, *auth.Hasher, *webhook.Keyring, error) {
	keysFrom := func(secrets *sqlstore.DB) (*auth.Hasher, *webhook.Keyring, error) {
		hasher, err := tokenHasher(ctx, c, secrets)
		if err != nil {
			return nil, nil, err
		}
		keys, err := secretKeyring(ctx, c, secretKey, secrets)
		return hasher, keys, err
	}
	var (
		hasher *auth.Hasher
		keys   *webhook.Keyring
		err    error
	)
	if c.TokenPepper != "" && secretKey != "" {
		hasher, keys, err = keysFrom(nil) // both configured: no database to read
	} else {
		secrets, openErr := openStore(ctx, c)
		if openErr != nil {
			return nil, nil, nil, openErr
		}
		hasher, keys, err = keysFrom(secrets)
		err = errors.Join(err, secrets.Close())
	}
	if err != nil {
		return nil, nil, nil, err
	}
	db, err := openStore(ctx, c, wire.Keys{Hasher: hasher, Sealing: keys}.Vault())
	if err != nil {
		return nil, nil, nil, err
	}
	return db, hasher, keys, nil
}

// tokenHasher returns the token hasher: keyed with the configured pepper, or
// in development with a pepper generated once and kept in db (which may be
// nil when the pepper is configured).
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

// storeCommand is the set-up every command on the store shares: the common
// settings beside the command's own, parsed and checked, then the store.
type storeCommand struct {
	commonConfig
	fs *flagSet
}

// newStoreCommand registers the common settings of the named command; the
// command registers its own on fs after them.
func newStoreCommand(name string, e env) *storeCommand {
	sc := &storeCommand{fs: newFlagSet(name, e)}
	sc.commonConfig.register(sc.fs)
	return sc
}

// parse parses args, then runs the command's own usage check of them
// (check may be nil), then validates the common settings. It returns the
// positional arguments.
func (sc *storeCommand) parse(args []string, check func(positional []string) error) ([]string, error) {
	positional, err := sc.fs.parse(args)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if check != nil {
		if err := check(positional); err != nil {
			return nil, err
		}
	}
	if err := sc.validate(); err != nil {
		return nil, err
	}
	return positional, nil
}

// open opens and migrates the store.
func (sc *storeCommand) open(ctx context.Context) (*sqlstore.DB, error) {
	return openStore(ctx, sc.commonConfig)
}

// openHashed opens the store and the token hasher, keyed as serve keys it.
func (sc *storeCommand) openHashed(ctx context.Context) (*sqlstore.DB, *auth.Hasher, error) {
	db, err := sc.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	hasher, err := tokenHasher(ctx, sc.commonConfig, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, hasher, nil
}
