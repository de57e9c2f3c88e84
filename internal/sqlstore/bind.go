package sqlstore

import (
	"context"
	"fmt"
	"time"

	"bokat/internal/idem"
)

// Bound is the database as one consuming package sees it: every method of
// *DB, with transactions handed to the consumer as T, the consumer's own Tx
// interface (which *Tx implements). It lets each package declare the small
// store and transaction interfaces it needs, in its own terms, while one
// type implements them all:
//
//	notify.NewWorker(sqlstore.Bind[notify.Tx](db), ...)
type Bound[T any] struct{ *DB }

// Bind adapts db to a consumer whose transactions are typed T. It panics
// when *Tx does not implement T: that is a wiring mistake, found at start.
func Bind[T any](db *DB) Bound[T] {
	if _, ok := any((*Tx)(nil)).(T); !ok {
		var zero *T
		panic(fmt.Sprintf("sqlstore: *Tx does not implement %T", zero))
	}
	return Bound[T]{db}
}

// InTx runs fn in one write transaction, as DB.InTx does.
func (b Bound[T]) InTx(ctx context.Context, fn func(T) error) error {
	return b.DB.InTx(ctx, func(tx *Tx) error { return fn(any(tx).(T)) })
}

// InIdempotentTx runs fn in one write transaction guarded by the key, as
// DB.InIdempotentTx does.
func (b Bound[T]) InIdempotentTx(ctx context.Context, k idem.Key, fingerprint string, now, expiresAt time.Time,
	fn func(T) (idem.Outcome, error)) (idem.Outcome, bool, error) {
	return b.DB.InIdempotentTx(ctx, k, fingerprint, now, expiresAt, func(tx *Tx) (idem.Outcome, error) { return fn(any(tx).(T)) })
}
