package sqlstore

import (
	"context"
	"errors"
	"time"

	"bokat"
	"bokat/internal/idem"
)

// errKeyClaimed means a concurrent transaction claimed the same key first.
var errKeyClaimed = errors.New("idempotency key claimed concurrently")

// InIdempotentTx runs fn in one write transaction guarded by the key:
//
//   - a key already used with the same fingerprint returns the stored
//     outcome with replay true, and fn does not run;
//   - a key used with another fingerprint fails with idempotency_key_reused
//     (409) and nothing changes;
//   - otherwise the key is claimed first thing in the transaction, fn runs,
//     and its outcome is stored in the same transaction.
//
// Claiming first makes a concurrent request with the same key wait for the
// first one's commit (PostgreSQL) or run after it (SQLite's single writer),
// and then replay its outcome instead of racing it on the effect. An empty
// key runs fn without a record. expiresAt zero keeps the key as long as its
// resource; a key whose expiry is at or before now is absent: it is
// removed in the transaction and the request is a new one. now and
// expiresAt are on the same clock (a test owner's for a test key).
func (db *DB) InIdempotentTx(ctx context.Context, k idem.Key, fingerprint string, now, expiresAt time.Time,
	fn func(tx *Tx) (idem.Outcome, error)) (out idem.Outcome, replay bool, err error) {
	for attempt := 0; attempt < maxTxAttempts; attempt++ {
		err = db.InTx(ctx, func(tx *Tx) error {
			out, replay = idem.Outcome{}, false
			if k.Key != "" {
				rec, err := tx.modeIdempotencyRecord(ctx, k.Mode.Or(), k.Owner, k.Operation, k.Key)
				if err == nil && rec.expired(now) {
					err = tx.dropExpiredIdempotencyRecord(ctx, rec, now)
					if err == nil {
						err = bokat.ErrNotFound
					}
				}
				switch {
				case err == nil:
					if rec.Fingerprint != fingerprint {
						return &bokat.Error{Code: bokat.CodeIdempotencyKeyReused,
							Detail:       "This idempotency key was already used with a different request.",
							SafeNextStep: "Use a new idempotency key for a new request; reuse a key only to retry the identical request."}
					}
					out, replay = idem.Outcome{Body: rec.ResponseBody, ResourceID: rec.ResourceID}, true
					return nil
				case !errors.Is(err, bokat.ErrNotFound):
					return err
				}
				err = tx.PutIdempotencyRecord(ctx, IdempotencyRecord{OwnerKey: k.Owner, Operation: k.Operation, Key: k.Key,
					Fingerprint: fingerprint, CreatedAt: now, ExpiresAt: expiresAt, Mode: k.Mode.Or()})
				if errors.Is(err, bokat.ErrConflict) {
					return errKeyClaimed
				}
				if err != nil {
					return err
				}
			}
			var err error
			out, err = fn(tx)
			if err != nil {
				return err
			}
			if k.Key == "" {
				return nil
			}
			_, err = tx.tx.ExecContext(ctx,
				`UPDATE idempotency_keys SET response_body = $1, resource_id = $2
				  WHERE owner_key = $3 AND operation = $4 AND idem_key = $5`,
				string(out.Body), out.ResourceID, k.Owner, k.Operation, k.Key)
			return translate(err)
		})
		if !errors.Is(err, errKeyClaimed) {
			return out, replay, err
		}
	}
	return idem.Outcome{}, false, &bokat.Error{Code: bokat.CodeIdempotencyRequestInProgress,
		Detail: "A request with this idempotency key is still being processed.", RetryAfter: time.Second}
}

// IdempotencyRecord is the stored outcome of a write made with an
// idempotency key. Keys are scoped to (owner, operation).
type IdempotencyRecord struct {
	OwnerKey     string
	Operation    string
	Key          string
	Fingerprint  string
	ResourceID   string
	ResponseBody []byte
	CreatedAt    time.Time
	// ExpiresAt is zero for keys kept as long as their resource.
	ExpiresAt time.Time
	// Mode is the realm of the record's owner (empty: live).
	Mode bokat.Mode
}

// IdempotencyRecord returns the stored record for the key in this
// transaction, or bokat.ErrNotFound.
func (tx *Tx) IdempotencyRecord(ctx context.Context, owner, operation, key string) (IdempotencyRecord, error) {
	return tx.modeIdempotencyRecord(ctx, bokat.ModeLive, owner, operation, key)
}

// modeIdempotencyRecord is IdempotencyRecord in the realm mode: a record
// of the other realm is bokat.ErrNotFound.
func (tx *Tx) modeIdempotencyRecord(ctx context.Context, mode bokat.Mode, owner, operation, key string) (IdempotencyRecord, error) {
	r := IdempotencyRecord{OwnerKey: owner, Operation: operation, Key: key, Mode: mode}
	var (
		body    string
		created int64
		expires = NullMillis(time.Time{})
	)
	err := tx.tx.QueryRowContext(ctx,
		`SELECT fingerprint, resource_id, response_body, created_at, expires_at
		   FROM idempotency_keys WHERE owner_key = $1 AND operation = $2 AND idem_key = $3 AND mode = $4`,
		owner, operation, key, string(mode)).Scan(&r.Fingerprint, &r.ResourceID, &body, &created, &expires)
	if err != nil {
		return IdempotencyRecord{}, translate(err)
	}
	r.ResponseBody = []byte(body)
	r.CreatedAt = FromMillis(created)
	r.ExpiresAt = FromNullMillis(expires)
	return r, nil
}

// expired reports whether the record's expiry is at or before now.
func (r IdempotencyRecord) expired(now time.Time) bool {
	return !r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt)
}

// dropExpiredIdempotencyRecord deletes the record if it is still expired
// at now, so that its key can be claimed again in this transaction.
func (tx *Tx) dropExpiredIdempotencyRecord(ctx context.Context, r IdempotencyRecord, now time.Time) error {
	_, err := tx.tx.ExecContext(ctx,
		`DELETE FROM idempotency_keys WHERE owner_key = $1 AND operation = $2 AND idem_key = $3
		    AND expires_at IS NOT NULL AND expires_at <= $4`,
		r.OwnerKey, r.Operation, r.Key, Millis(now))
	return translate(err)
}

// DeleteExpiredIdempotencyKeys deletes, in one transaction, up to limit
// idempotency keys of either realm whose expiry is at or before now (the
// server's clock: a test owner's clock is never behind it), and returns
// how many it deleted. Keys without an expiry are kept.
func (db *DB) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time, limit int) (int, error) {
	return db.execCounted(ctx, `DELETE FROM idempotency_keys WHERE (owner_key, operation, idem_key) IN (
		SELECT owner_key, operation, idem_key FROM idempotency_keys
		 WHERE expires_at IS NOT NULL AND expires_at <= $1 LIMIT $2)`, Millis(now), limit)
}

// PutIdempotencyRecord stores the outcome of a keyed write in the same
// transaction as the write. A concurrent writer of the same key makes it
// fail with bokat.ErrConflict; the caller then runs again and replays.
func (tx *Tx) PutIdempotencyRecord(ctx context.Context, r IdempotencyRecord) error {
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO idempotency_keys (owner_key, operation, idem_key, fingerprint, resource_id,
		        response_body, created_at, expires_at, mode)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		r.OwnerKey, r.Operation, r.Key, r.Fingerprint, r.ResourceID, string(r.ResponseBody),
		Millis(r.CreatedAt), NullMillis(r.ExpiresAt), string(r.Mode.Or()))
	return translate(err)
}
