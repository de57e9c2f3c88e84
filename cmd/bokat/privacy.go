package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
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

// Retention defaults (docs/privacy.md): booking contact data is kept for the
// consumer-services complaint period after the slot ended or the booking
// was cancelled; follow-up request contact data for the weeks in which
// providers answer.
const (
	defaultRetainBookings = 3 * 365 * 24 * time.Hour
	defaultRetainRequests = 30 * 24 * time.Hour
)

// retentionConfig holds how long customer contact data is kept.
type retentionConfig struct {
	RetainBookings time.Duration
	RetainRequests time.Duration
}

func (c *retentionConfig) register(fs *flagSet) {
	c.RetainBookings, c.RetainRequests = defaultRetainBookings, defaultRetainRequests
	fs.Text(new(string), "retain-bookings", "BOKAT_RETAIN_BOOKINGS", "1095d",
		"how long a booking's customer contact data is kept after its slot ended or it was cancelled (Go duration or days, e.g. 1095d)",
		retentionSetter(&c.RetainBookings))
	fs.Text(new(string), "retain-requests", "BOKAT_RETAIN_REQUESTS", "30d",
		"how long a follow-up request's customer contact data is kept after it was created (Go duration or days, e.g. 30d)",
		retentionSetter(&c.RetainRequests))
}

func retentionSetter(p *time.Duration) func(string) error {
	return func(s string) error {
		d, err := parseRetention(s)
		if err != nil {
			return err
		}
		*p = d
		return nil
	}
}

// parseRetention reads a retention period: a Go duration ("720h") or whole
// days ("30d"), at least one hour.
func parseRetention(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("must be a whole number of days (like 30d) or a Go duration (like 720h)")
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("must be a whole number of days (like 30d) or a Go duration (like 720h)")
		}
	}
	if d < time.Hour {
		return 0, fmt.Errorf("must be at least 1h")
	}
	return d, nil
}

// retentionBatch is how many rows of each table one erasure transaction takes.
const retentionBatch = 200

// retentionWorker erases expired customer contact data (EraseExpiredContacts)
// at once and then every interval, batch after batch until none is left.
// Several processes may run it. It logs counts only.
func retentionWorker(db *sqlstore.DB, log *slog.Logger, now func() time.Time, c retentionConfig, interval time.Duration) worker {
	return worker{name: "contact-retention", run: func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			bookings, requests, dropped := 0, 0, 0
			for ctx.Err() == nil {
				at := now()
				e, err := db.EraseExpiredContacts(ctx, at, at.Add(-c.RetainBookings), at.Add(-c.RetainRequests), retentionBatch)
				if err != nil {
					if ctx.Err() == nil {
						log.Warn("contact retention failed", "error", err.Error())
					}
					break
				}
				bookings, requests, dropped = bookings+len(e.Bookings), requests+len(e.Requests), dropped+e.DroppedNotifications
				if len(e.Bookings) == 0 && len(e.Requests) == 0 {
					break
				}
			}
			if bookings+requests > 0 {
				log.Info("expired contact data erased", "bookings", bookings, "requests", requests, "dropped_notifications", dropped)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}}
}
