package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// TestClockOffset returns how far the test owner's clock stands ahead of
// the server's: zero for an owner that never moved it.
func (db *DB) TestClockOffset(ctx context.Context, clientID, userID string) (time.Duration, error) {
	return testClockOffset(ctx, db.read, clientID, userID, "")
}

// TestClockOffset is DB.TestClockOffset inside the transaction.
func (tx *Tx) TestClockOffset(ctx context.Context, clientID, userID string) (time.Duration, error) {
	return testClockOffset(ctx, tx.tx, clientID, userID, "")
}

// querier is what reads a row: the read pool or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func testClockOffset(ctx context.Context, q querier, clientID, userID, lock string) (time.Duration, error) {
	var ms int64
	err := q.QueryRowContext(ctx, `SELECT offset_ms FROM test_clocks WHERE owner_client_id = $1 AND owner_user_id = $2`+lock,
		clientID, userID).Scan(&ms)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, translate(err)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// AdvanceTestClock moves the test owner's clock forward, in one
// transaction: step gets the clock's offset and returns by how much to
// move it (or an error, which changes nothing); the offset grows by that
// much, and the owner's pending test webhook deliveries become due that
// much earlier, so that the retry ladder runs on the owner's clock while
// the dispatcher keeps reading the server's. It returns the new offset.
func (db *DB) AdvanceTestClock(ctx context.Context, clientID, userID string, now time.Time,
	step func(offset time.Duration) (time.Duration, error)) (time.Duration, error) {
	var offset time.Duration
	err := db.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.ExecContext(ctx, `INSERT INTO test_clocks (owner_client_id, owner_user_id, offset_ms, updated_at)
			VALUES ($1, $2, 0, $3) ON CONFLICT (owner_client_id, owner_user_id) DO NOTHING`,
			clientID, userID, Millis(now)); err != nil {
			return translate(err)
		}
		lock := ""
		if tx.engine == Postgres {
			lock = " FOR UPDATE"
		}
		old, err := testClockOffset(ctx, tx.tx, clientID, userID, lock)
		if err != nil {
			return err
		}
		by, err := step(old)
		if err != nil {
			return err
		}
		offset = old + by
		ms := by.Milliseconds()
		if _, err := tx.tx.ExecContext(ctx, `UPDATE test_clocks SET offset_ms = offset_ms + $3, updated_at = $4
			WHERE owner_client_id = $1 AND owner_user_id = $2`, clientID, userID, ms, Millis(now)); err != nil {
			return translate(err)
		}
		_, err = tx.tx.ExecContext(ctx, `UPDATE webhook_deliveries SET next_attempt_at = next_attempt_at - $3
			WHERE mode = 'test' AND status = 'pending' AND endpoint_id IN (SELECT id FROM webhook_endpoints
			WHERE owner_client_id = $1 AND owner_user_id = $2 AND mode = 'test')`, clientID, userID, ms)
		return translate(err)
	})
	return offset, err
}
