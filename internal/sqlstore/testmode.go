package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/notify"
	"bokat/internal/outbox"
)

var _ notify.Capturer = (*DB)(nil)

// CaptureMessage keeps the message of the test-mode job j, made at at (the
// server's now), for the owner of its booking or request (test_messages),
// instead of sending it, stamped with the owner's test clock's now. The
// address is not kept: the recipient is named by j.Recipient. A job of the
// live realm is refused: live messages are sent, never captured.
func (db *DB) CaptureMessage(ctx context.Context, j notify.ClaimedJob, m notify.Message, at time.Time) error {
	if !j.Mode.Test() {
		return fmt.Errorf("capture message: job %s is not a test-mode job", j.ID)
	}
	method := ""
	if m.Calendar != nil {
		method = m.Calendar.Method
	}
	owner, of := `SELECT owner_client_id, owner_user_id FROM bookings WHERE id = $1 AND mode = 'test'`, j.BookingID
	if j.BookingID == "" {
		owner, of = `SELECT owner_client_id, owner_user_id FROM follow_up_requests WHERE id = $1 AND mode = 'test'`, j.RequestID
	}
	return db.InTx(ctx, func(tx *Tx) error {
		var client, user string
		if err := tx.tx.QueryRowContext(ctx, owner, of).Scan(&client, &user); err != nil {
			return fmt.Errorf("capture message: owner of job %s: %w", j.ID, translate(err))
		}
		_, at, err := bokat.OwnerNow(ctx, tx, bokat.ModeTest, client, user, at)
		if err != nil {
			return fmt.Errorf("capture message: test clock of job %s: %w", j.ID, err)
		}
		_, err = tx.tx.ExecContext(ctx, `INSERT INTO test_messages (id, job_id, owner_client_id, owner_user_id,
			booking_id, request_id, event_type, recipient, subject, body, calendar_method, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			uuid.Must(uuid.NewV7()).String(), j.ID, client, user, j.BookingID, j.RequestID, j.EventType, j.Recipient,
			m.Subject, m.Text, method, Millis(at))
		return translate(err)
	})
}

// TestMessages returns the owner's captured messages, oldest first, at
// most limit.
func (db *DB) TestMessages(ctx context.Context, clientID, userID string, limit int) ([]bokat.TestMessage, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, booking_id, request_id, event_type, recipient, subject, body,
		calendar_method, created_at FROM test_messages WHERE owner_client_id = $1 AND owner_user_id = $2
		ORDER BY created_at, id LIMIT $3`, clientID, userID, limit)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []bokat.TestMessage
	for rows.Next() {
		var m bokat.TestMessage
		var created int64
		if err := rows.Scan(&m.ID, &m.BookingID, &m.RequestID, &m.EventType, &m.Recipient, &m.Subject, &m.Body,
			&m.CalendarMethod, &created); err != nil {
			return nil, translate(err)
		}
		m.CreatedAt = FromMillis(created)
		out = append(out, m)
	}
	return out, translate(rows.Err())
}

// OwnerEvents returns the owner's outbox events of the realm mode, oldest
// first, created after the event after (its id; empty for the first page),
// at most limit. An after that names no event of the owner is
// bokat.ErrNotFound.
func (db *DB) OwnerEvents(ctx context.Context, clientID, userID string, mode bokat.Mode, after string, limit int) ([]outbox.Event, error) {
	args := []any{clientID, userID, string(mode.Or()), limit}
	cursor := ""
	if after != "" {
		var n int
		if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox_events
			WHERE id = $1 AND owner_client_id = $2 AND owner_user_id = $3 AND mode = $4`,
			after, clientID, userID, string(mode.Or())).Scan(&n); err != nil {
			return nil, translate(err)
		}
		if n == 0 {
			return nil, bokat.ErrNotFound
		}
		args = append(args, after)
		cursor = ` AND (created_at > (SELECT created_at FROM outbox_events WHERE id = $5)
			OR created_at = (SELECT created_at FROM outbox_events WHERE id = $5) AND id > $5)`
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+outboxColumns+` FROM outbox_events
		WHERE owner_client_id = $1 AND owner_user_id = $2 AND mode = $3`+cursor+`
		ORDER BY created_at, id LIMIT $4`, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []outbox.Event
	for rows.Next() {
		e, err := scanOutboxEvent(rows)
		if err != nil {
			return nil, err
		}
		e.Mode = mode.Or()
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// DueTestCancellations returns the ids of the provider's confirmed test
// bookings confirmed at or before confirmedBefore on their owner's test
// clock (the server's, moved ahead by the owner's offset), oldest first,
// at most limit.
func (db *DB) DueTestCancellations(ctx context.Context, providerID string, confirmedBefore time.Time, limit int) ([]string, error) {
	return db.ids(ctx, `SELECT b.id FROM bookings b LEFT JOIN test_clocks c
		ON c.owner_client_id = b.owner_client_id AND c.owner_user_id = b.owner_user_id
		WHERE b.provider_id = $1 AND b.mode = 'test' AND b.status = 'confirmed'
		AND b.confirmed_at <= $2 + COALESCE(c.offset_ms, 0) ORDER BY b.confirmed_at, b.id LIMIT $3`,
		providerID, Millis(confirmedBefore), limit)
}
