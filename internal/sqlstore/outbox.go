package sqlstore

import (
	"context"
	"database/sql"

	"bokat"
	"bokat/internal/outbox"
)

// InsertOutboxEvent writes an outbox event in the transaction.
func (tx *Tx) InsertOutboxEvent(ctx context.Context, e outbox.Event) error {
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO outbox_events (id, owner_client_id, owner_user_id, booking_id, event_type, payload, occurred_at, created_at, mode)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		e.ID, e.OwnerClientID, e.OwnerUserID, e.BookingID, e.EventType, string(e.Payload), Millis(e.OccurredAt), Millis(e.CreatedAt),
		string(e.Mode.Or()))
	return translate(err)
}

// InsertNotificationJob writes a notification job in the transaction.
func (tx *Tx) InsertNotificationJob(ctx context.Context, j bokat.NotificationJob) error {
	if j.APIRequestID == "" && j.TraceID == "" {
		ids := bokat.RequestIDsFrom(ctx)
		j.APIRequestID, j.TraceID = ids.APIRequestID, ids.TraceID
	}
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO notification_jobs (id, outbox_id, booking_id, request_id, event_type, recipient, status, next_attempt_at,
		        created_at, updated_at, api_request_id, trace_id, mode)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $12)`,
		j.ID, nullString(j.OutboxID), nullString(j.BookingID), nullString(j.RequestID), j.EventType, j.Recipient, j.Status,
		Millis(j.NextAttemptAt), Millis(j.CreatedAt), j.APIRequestID, j.TraceID, string(j.Mode.Or()))
	return translate(err)
}

// nullString stores the empty string as NULL.
func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
