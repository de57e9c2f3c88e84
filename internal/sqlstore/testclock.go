package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"bokat/internal/testrealm"
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
// much, and the owner's pending test webhook deliveries and notification
// jobs (of its bookings and follow-up requests) become due that much
// earlier, jobs no earlier than now, so that their retry ladders run on
// the owner's clock while the dispatcher and the notification worker keep
// reading the server's. A job being attempted as the clock moves may
// become due again before its attempt ends (its lease is shortened as
// well): delivery is at least once, and only its latest attempt records
// an outcome. It returns the new offset.
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
		if _, err := tx.tx.ExecContext(ctx, `UPDATE webhook_deliveries SET next_attempt_at = next_attempt_at - $3
			WHERE mode = 'test' AND status = 'pending' AND endpoint_id IN (SELECT id FROM webhook_endpoints
			WHERE owner_client_id = $1 AND owner_user_id = $2 AND mode = 'test')`, clientID, userID, ms); err != nil {
			return translate(err)
		}
		// The owner's notification jobs not yet due (a message retried after
		// a failed attempt) come due as much earlier, but never before now.
		_, err = tx.tx.ExecContext(ctx, `UPDATE notification_jobs
			SET next_attempt_at = CASE WHEN next_attempt_at - $3 < $4 THEN $4 ELSE next_attempt_at - $3 END
			WHERE mode = 'test' AND status = 'pending' AND next_attempt_at > $4
			AND (booking_id IN (SELECT id FROM bookings WHERE owner_client_id = $1 AND owner_user_id = $2 AND mode = 'test')
				OR request_id IN (SELECT id FROM follow_up_requests
					WHERE owner_client_id = $1 AND owner_user_id = $2 AND mode = 'test'))`,
			clientID, userID, ms, Millis(now))
		return translate(err)
	})
	return offset, err
}

var _ testrealm.RetentionStore = (*DB)(nil)

// ExpiredTestBookings returns, in id order, up to limit test bookings
// still holding contact data whose slot ended (confirmed) or that were
// cancelled before before on their owner's test clock (the server's moved
// ahead by the owner's offset), each with that offset. Only owners whose
// clock moved are looked at: the others' bookings expire on the server's
// clock, with the live ones.
func (db *DB) ExpiredTestBookings(ctx context.Context, before time.Time, limit int) ([]testrealm.Expired, error) {
	return scanExpired(db.read.QueryContext(ctx, `SELECT b.id, c.offset_ms FROM bookings b JOIN test_clocks c
		ON c.owner_client_id = b.owner_client_id AND c.owner_user_id = b.owner_user_id
		WHERE b.mode = 'test' AND c.offset_ms > 0 AND b.contact_erased_at IS NULL
		AND ((b.status = 'confirmed' AND b.slot_end_at < $1 + c.offset_ms)
			OR (b.status = 'cancelled' AND b.cancelled_at < $1 + c.offset_ms))
		ORDER BY b.id LIMIT $2`, Millis(before), limit))
}

// ExpiredTestRequests returns, in id order, up to limit test follow-up
// requests still holding contact data and created before before on their
// owner's test clock, each with that clock's offset. Only owners whose
// clock moved are looked at, as in ExpiredTestBookings.
func (db *DB) ExpiredTestRequests(ctx context.Context, before time.Time, limit int) ([]testrealm.Expired, error) {
	return scanExpired(db.read.QueryContext(ctx, `SELECT r.id, c.offset_ms FROM follow_up_requests r JOIN test_clocks c
		ON c.owner_client_id = r.owner_client_id AND c.owner_user_id = r.owner_user_id
		WHERE r.mode = 'test' AND c.offset_ms > 0 AND r.contact_erased_at IS NULL AND r.created_at < $1 + c.offset_ms
		ORDER BY r.id LIMIT $2`, Millis(before), limit))
}

// scanExpired reads rows of an id and an offset in milliseconds.
func scanExpired(rows *sql.Rows, err error) ([]testrealm.Expired, error) {
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []testrealm.Expired
	for rows.Next() {
		var e testrealm.Expired
		var ms int64
		if err := rows.Scan(&e.ID, &ms); err != nil {
			return nil, translate(err)
		}
		e.Offset = time.Duration(ms) * time.Millisecond
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// EraseTestBookingContact erases a test booking's contact data
// (EraseBookingContact) in a transaction of its own; a live booking is
// refused with an error and left as it is.
func (db *DB) EraseTestBookingContact(ctx context.Context, id string, now, endedBefore time.Time) (bool, error) {
	return db.eraseTest(ctx, "bookings", id, func(tx *Tx) (bool, int, error) {
		return tx.EraseBookingContact(ctx, id, now, endedBefore)
	})
}

// EraseTestRequestContact erases a test follow-up request's contact data
// (EraseRequestContact) in a transaction of its own; a live request is
// refused with an error and left as it is.
func (db *DB) EraseTestRequestContact(ctx context.Context, id string, now, createdBefore time.Time) (bool, error) {
	return db.eraseTest(ctx, "follow_up_requests", id, func(tx *Tx) (bool, int, error) {
		return tx.EraseRequestContact(ctx, id, now, createdBefore)
	})
}

// eraseTest runs erase in a transaction of its own once the row id of
// table is found to be of the test realm.
func (db *DB) eraseTest(ctx context.Context, table, id string, erase func(tx *Tx) (bool, int, error)) (bool, error) {
	var erased bool
	err := db.InTx(ctx, func(tx *Tx) error {
		var mode string
		if err := tx.tx.QueryRowContext(ctx, `SELECT mode FROM `+table+` WHERE id = $1`, id).Scan(&mode); err != nil {
			return translate(err)
		}
		if mode != "test" {
			return fmt.Errorf("erase test contact data: %s %s is not of the test realm", table, id)
		}
		var err error
		erased, _, err = erase(tx)
		return err
	})
	return erased, err
}
