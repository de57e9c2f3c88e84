package sqlstore

import (
	"context"
	"database/sql"
	"time"
)

// erasedLastError is the last_error of a notification job dropped because
// the contact data it needed was erased.
const erasedLastError = "contact data erased"

// execCounted runs one statement in a transaction of its own and returns how
// many rows it changed: a retention batch.
func (db *DB) execCounted(ctx context.Context, query string, args ...any) (int, error) {
	var n int64
	err := db.InTx(ctx, func(tx *Tx) error {
		res, err := tx.tx.ExecContext(ctx, query, args...)
		if err != nil {
			return translate(err)
		}
		n, err = res.RowsAffected()
		return translate(err)
	})
	return int(n), err
}

// ExpiredContacts implements privacy.Store.
func (db *DB) ExpiredContacts(ctx context.Context, bookingsBefore, requestsBefore time.Time, limit int) (bookings, requests []string, err error) {
	bookings, err = db.ids(ctx, `SELECT id FROM bookings WHERE contact_erased_at IS NULL
		AND ((status = 'confirmed' AND slot_end_at < $1) OR (status = 'cancelled' AND cancelled_at < $1))
		ORDER BY id LIMIT $2`, Millis(bookingsBefore), limit)
	if err != nil {
		return nil, nil, err
	}
	requests, err = db.ids(ctx, `SELECT id FROM follow_up_requests WHERE contact_erased_at IS NULL AND created_at < $1
		ORDER BY id LIMIT $2`, Millis(requestsBefore), limit)
	if err != nil {
		return nil, nil, err
	}
	return bookings, requests, nil
}

// EraseBookingContact implements privacy.Tx.
func (tx *Tx) EraseBookingContact(ctx context.Context, id string, now, endedBefore time.Time) (bool, int, error) {
	if endedBefore.IsZero() {
		return tx.eraseBooking(ctx, id, now, "")
	}
	return tx.eraseBooking(ctx, id, now, `AND ((status = 'confirmed' AND slot_end_at < $3)
		OR (status = 'cancelled' AND cancelled_at < $3))`, Millis(endedBefore))
}

// EraseRequestContact implements privacy.Tx.
func (tx *Tx) EraseRequestContact(ctx context.Context, id string, now, createdBefore time.Time) (bool, int, error) {
	if createdBefore.IsZero() {
		return tx.eraseRequest(ctx, id, now, "")
	}
	return tx.eraseRequest(ctx, id, now, `AND created_at < $3`, Millis(createdBefore))
}

// eraseBooking empties the contact columns of a booking that still holds
// them and meets cond (SQL over the booking's columns, its argument $3),
// and skips the booking's pending notification jobs. It reports whether
// it erased the booking.
func (tx *Tx) eraseBooking(ctx context.Context, id string, now time.Time, cond string, arg ...any) (bool, int, error) {
	res, err := tx.tx.ExecContext(ctx, `UPDATE bookings SET customer_name = '', customer_first_name = '',
		customer_last_name = '', customer_phone = '', customer_email = '', service_address = '',
		destination_address = '', consent_statement = '', cancel_notes = '', customer_email_index = '',
		customer_phone_index = '', contact_erased_at = $2
		WHERE id = $1 AND contact_erased_at IS NULL `+cond, append([]any{id, Millis(now)}, arg...)...)
	if err != nil {
		return false, 0, translate(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, 0, translate(err)
	}
	if err := tx.dropTestMessages(ctx, "booking_id", id); err != nil {
		return false, 0, err
	}
	dropped, err := tx.dropPendingNotifications(ctx, "booking_id", id, now)
	return true, dropped, err
}

// eraseRequest is eraseBooking for a follow-up request: customer and
// location become {}, description, details and consent statement empty.
func (tx *Tx) eraseRequest(ctx context.Context, id string, now time.Time, cond string, arg ...any) (bool, int, error) {
	res, err := tx.tx.ExecContext(ctx, `UPDATE follow_up_requests SET customer_json = '{}', location_json = '{}',
		description = '', details_json = '{}', consent_statement = '', contact_key_id = NULL,
		customer_email_index = '', customer_phone_index = '', contact_erased_at = $2
		WHERE id = $1 AND contact_erased_at IS NULL `+cond, append([]any{id, Millis(now)}, arg...)...)
	if err != nil {
		return false, 0, translate(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, 0, translate(err)
	}
	if err := tx.dropTestMessages(ctx, "request_id", id); err != nil {
		return false, 0, err
	}
	dropped, err := tx.dropPendingNotifications(ctx, "request_id", id, now)
	return true, dropped, err
}

// dropTestMessages deletes the captured test messages of a booking or
// request whose contact data is erased: their bodies carry it.
func (tx *Tx) dropTestMessages(ctx context.Context, column, id string) error {
	_, err := tx.tx.ExecContext(ctx, `DELETE FROM test_messages WHERE `+column+` = $1`, id)
	return translate(err)
}

func (tx *Tx) dropPendingNotifications(ctx context.Context, column, id string, now time.Time) (int, error) {
	res, err := tx.tx.ExecContext(ctx, `UPDATE notification_jobs SET status = 'skipped', last_error = $2, updated_at = $3
		WHERE `+column+` = $1 AND status = 'pending'`, id, erasedLastError, Millis(now))
	if err != nil {
		return 0, translate(err)
	}
	n, err := res.RowsAffected()
	return int(n), translate(err)
}

// ids runs a query returning one id column.
func (db *DB) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	return scanIDs(db.read.QueryContext(ctx, query, args...))
}

// scanIDs reads the one id column of rows.
func scanIDs(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, translate(err)
		}
		out = append(out, id)
	}
	return out, translate(rows.Err())
}
