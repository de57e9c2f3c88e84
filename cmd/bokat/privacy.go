package main

import (
	"context"
	"log/slog"
	"time"

	"bokat/internal/auth"
	"bokat/internal/sqlstore"
)

// setupVault gives the store the vault sealing customer contact data: the
// --secret-key keyring (as for webhook signing secrets) and the blind
// index keyed with the token pepper.
func setupVault(ctx context.Context, c serveConfig, db *sqlstore.DB, hasher *auth.Hasher) error {
	keys, err := secretKeyring(ctx, c, db)
	if err != nil {
		return err
	}
	db.SetVault(&sqlstore.Vault{Keys: keys, Index: hasher.Hash})
	return nil
}

// resealBatch is how many rows of each table one re-seal transaction takes.
const resealBatch = 200

// resealWorker re-seals contact data written in plain text (before sealing,
// or by an older binary during a rolling upgrade) or sealed with a key that
// is no longer the first of --secret-key: at once, batch after batch until
// none is left, then every interval. Several processes may run it.
func resealWorker(db *sqlstore.DB, log *slog.Logger, interval time.Duration) worker {
	return worker{name: "contact-reseal", run: func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			total := 0
			for ctx.Err() == nil {
				n, err := db.ResealContacts(ctx, resealBatch)
				total += n
				if err != nil {
					if ctx.Err() == nil {
						log.Warn("contact re-seal failed", "error", err.Error(), "resealed_rows", total)
					}
					break
				}
				if n == 0 {
					break
				}
			}
			if total > 0 {
				log.Info("contact data re-sealed", "rows", total)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}}
}
