package sqlstore

import (
	"context"
	"time"
)

// IdempotencyRecord is the stored outcome of a write made with an
// idempotency key. Keys are scoped to (owner, operation).
type IdempotencyRecord struct {
	OwnerKey       string
	Operation      string
	Key            string
	Fingerprint    string
	ResourceID     string
	ResponseStatus int
	ResponseBody   []byte
	CreatedAt      time.Time
	// ExpiresAt is zero for keys kept as long as their resource.
	ExpiresAt time.Time
}

// IdempotencyRecord returns the stored record for the key in this
// transaction, or bokat.ErrNotFound.
func (tx *Tx) IdempotencyRecord(ctx context.Context, owner, operation, key string) (IdempotencyRecord, error) {
	r := IdempotencyRecord{OwnerKey: owner, Operation: operation, Key: key}
	var (
		body    string
		created int64
		expires = NullMillis(time.Time{})
	)
	err := tx.tx.QueryRowContext(ctx,
		`SELECT fingerprint, resource_id, response_status, response_body, created_at, expires_at
		   FROM idempotency_keys WHERE owner_key = $1 AND operation = $2 AND idem_key = $3`,
		owner, operation, key).Scan(&r.Fingerprint, &r.ResourceID, &r.ResponseStatus, &body, &created, &expires)
	if err != nil {
		return IdempotencyRecord{}, translate(err)
	}
	r.ResponseBody = []byte(body)
	r.CreatedAt = FromMillis(created)
	r.ExpiresAt = FromNullMillis(expires)
	return r, nil
}

// PutIdempotencyRecord stores the outcome of a keyed write in the same
// transaction as the write. A concurrent writer of the same key makes it
// fail with bokat.ErrConflict; the caller then runs again and replays.
func (tx *Tx) PutIdempotencyRecord(ctx context.Context, r IdempotencyRecord) error {
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO idempotency_keys (owner_key, operation, idem_key, fingerprint, resource_id,
		        response_status, response_body, created_at, expires_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		r.OwnerKey, r.Operation, r.Key, r.Fingerprint, r.ResourceID, r.ResponseStatus, string(r.ResponseBody),
		Millis(r.CreatedAt), NullMillis(r.ExpiresAt))
	return translate(err)
}
