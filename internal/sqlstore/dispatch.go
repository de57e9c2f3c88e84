package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"bokat"
)

// SetRequestCandidateStatus records how sending a follow-up request to one
// of its candidate providers went — bokat.NotificationSent, Skipped or
// Failed — in a transaction of its own, so that a retry of the request's
// job writes only to the providers still pending. Only a pending candidate
// changes; an unknown one is not an error. notified_at is set when sent.
func (db *DB) SetRequestCandidateStatus(ctx context.Context, requestID, providerID, status string, now time.Time) error {
	if err := checkCandidateStatus(status); err != nil {
		return err
	}
	var at sql.NullInt64
	if status == bokat.NotificationSent {
		at = sql.NullInt64{Int64: Millis(now), Valid: true}
	}
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx,
			`UPDATE follow_up_request_candidates SET notification_status = $3, notified_at = $4
			  WHERE request_id = $1 AND provider_id = $2 AND notification_status = 'pending'`,
			requestID, providerID, status, at)
		return translate(err)
	})
}

// EndPendingRequestCandidates gives every candidate of the request still
// pending the status (Skipped or Failed), inside tx: the request's job has
// ended and nothing more will be sent.
func (tx *Tx) EndPendingRequestCandidates(ctx context.Context, requestID, status string) error {
	if status == bokat.NotificationSent {
		return fmt.Errorf("end pending candidates: %q is not an end without a message", status)
	}
	if err := checkCandidateStatus(status); err != nil {
		return err
	}
	_, err := tx.tx.ExecContext(ctx,
		`UPDATE follow_up_request_candidates SET notification_status = $2
		  WHERE request_id = $1 AND notification_status = 'pending'`, requestID, status)
	return translate(err)
}

func checkCandidateStatus(status string) error {
	switch status {
	case bokat.NotificationSent, bokat.NotificationSkipped, bokat.NotificationFailed:
		return nil
	}
	return fmt.Errorf("candidate notification status %q: want sent, skipped or failed", status)
}
