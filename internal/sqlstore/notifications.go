package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"bokat/internal/notify"
)

// The notification worker's store and transaction.
var (
	_ notify.Store = Bound[notify.Tx]{}
	_ notify.Tx    = (*Tx)(nil)
)

// ClaimNotificationJobs leases up to limit pending jobs of both kinds due
// at now: each gets its attempt counter raised and is hidden from other
// workers until now+lease (if its worker dies, the job becomes due again
// then). On PostgreSQL concurrent workers skip each other's rows (FOR UPDATE
// SKIP LOCKED); on SQLite the claim runs in the single write transaction.
func (db *DB) ClaimNotificationJobs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]notify.ClaimedJob, error) {
	return db.ClaimNotificationJobsOf(ctx, notify.AllJobs, now, lease, limit)
}

// ClaimNotificationJobsOf is ClaimNotificationJobs for the given kinds only
// (a worker without a booking store leaves booking jobs for one that has it).
func (db *DB) ClaimNotificationJobsOf(ctx context.Context, kinds notify.Kinds, now time.Time, lease time.Duration, limit int) ([]notify.ClaimedJob, error) {
	lock := ""
	if db.engine == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var kind string
	switch kinds & notify.AllJobs {
	case notify.AllJobs:
	case notify.BookingJobs:
		kind = " AND booking_id IS NOT NULL"
	case notify.RequestJobs:
		kind = " AND request_id IS NOT NULL"
	default:
		return nil, nil
	}
	var jobs []notify.ClaimedJob
	err := db.InTx(ctx, func(tx *Tx) error {
		jobs = jobs[:0]
		rows, err := tx.tx.QueryContext(ctx,
			`UPDATE notification_jobs SET attempts = attempts + 1, next_attempt_at = $2, updated_at = $1
			  WHERE id IN (SELECT id FROM notification_jobs
			                WHERE status = 'pending' AND next_attempt_at <= $1`+kind+`
			                ORDER BY next_attempt_at, id LIMIT $3`+lock+`)
			  RETURNING id, outbox_id, booking_id, request_id, event_type, recipient, attempts, api_request_id, trace_id,
			            created_at, COALESCE((SELECT o.payload FROM outbox_events o WHERE o.id = notification_jobs.outbox_id), ''), mode`,
			Millis(now), Millis(now.Add(lease)), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				j                          notify.ClaimedJob
				outbox, booking, requestID sql.NullString
				created                    int64
				payload                    string
			)
			if err := rows.Scan(&j.ID, &outbox, &booking, &requestID, &j.EventType, &j.Recipient, &j.Attempt,
				&j.APIRequestID, &j.TraceID, &created, &payload, &j.Mode); err != nil {
				return err
			}
			j.OutboxID, j.BookingID, j.RequestID = outbox.String, booking.String, requestID.String
			j.CreatedAt = FromMillis(created)
			j.Reason = eventReason(payload)
			jobs = append(jobs, j)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, translate(err)
	}
	return jobs, nil
}

// eventReason returns the reason an outbox event's payload carries (its
// data.reason), or "" when it has none or the payload is not an object.
func eventReason(payload string) string {
	var data struct {
		Reason string `json:"reason"`
	}
	if json.Unmarshal([]byte(payload), &data) != nil {
		return ""
	}
	return data.Reason
}

// FinishNotificationJob ends a claimed job with status sent, skipped or
// failed. lastError must hold no contact data. It returns
// notify.ErrLeaseLost when the claim is no longer the job's latest. A failed
// job becomes due for escalation at now.
func (tx *Tx) FinishNotificationJob(ctx context.Context, j notify.ClaimedJob, status, lastError string, now time.Time) error {
	res, err := tx.tx.ExecContext(ctx,
		`UPDATE notification_jobs SET status = $3, last_error = $4, updated_at = $5, next_attempt_at = $5
		  WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
		j.ID, j.Attempt, status, lastError, Millis(now))
	return fenced(res, err)
}

// RetryNotificationJob keeps a claimed job pending until next, recording
// why this attempt failed. It returns notify.ErrLeaseLost like
// FinishNotificationJob.
func (tx *Tx) RetryNotificationJob(ctx context.Context, j notify.ClaimedJob, next time.Time, lastError string, now time.Time) error {
	res, err := tx.tx.ExecContext(ctx,
		`UPDATE notification_jobs SET next_attempt_at = $3, last_error = $4, updated_at = $5
		  WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
		j.ID, j.Attempt, Millis(next), lastError, Millis(now))
	return fenced(res, err)
}

func fenced(res sql.Result, err error) error {
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return notify.ErrLeaseLost
	}
	return nil
}

// LatestNotificationOutcome returns the status (sent, skipped, failed) of
// the most recently queued job for the booking and recipient that has
// ended, or bokat.ErrNotFound when none has. It is the value of the
// booking's <recipient>_confirmation_status.
func (tx *Tx) LatestNotificationOutcome(ctx context.Context, bookingID, recipient string) (string, error) {
	var status string
	err := tx.tx.QueryRowContext(ctx,
		`SELECT status FROM notification_jobs
		  WHERE booking_id = $1 AND recipient = $2 AND status <> 'pending'
		  ORDER BY created_at DESC, id DESC LIMIT 1`, bookingID, recipient).Scan(&status)
	if err != nil {
		return "", translate(err)
	}
	return status, nil
}

// ClaimEscalations leases up to limit failed provider jobs of bookings that
// have not raised booking.provider_action_required yet, hiding them from
// other workers until now+lease. Jobs of follow-up requests never escalate:
// there is no booking to act on.
func (db *DB) ClaimEscalations(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]notify.EscalationClaim, error) {
	lock := ""
	if db.engine == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var out []notify.EscalationClaim
	err := db.InTx(ctx, func(tx *Tx) error {
		out = out[:0]
		rows, err := tx.tx.QueryContext(ctx,
			`UPDATE notification_jobs SET next_attempt_at = $2
			  WHERE id IN (SELECT id FROM notification_jobs
			                WHERE status = 'failed' AND recipient = 'provider' AND escalated_at IS NULL
			                  AND next_attempt_at <= $1 AND booking_id IS NOT NULL
			                ORDER BY next_attempt_at, id LIMIT $3`+lock+`)
			  RETURNING id, booking_id, api_request_id, trace_id`,
			Millis(now), Millis(now.Add(lease)), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c notify.EscalationClaim
			if err := rows.Scan(&c.JobID, &c.BookingID, &c.APIRequestID, &c.TraceID); err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, translate(err)
	}
	return out, nil
}

// MarkEscalated records that the job's booking.provider_action_required
// was raised.
func (db *DB) MarkEscalated(ctx context.Context, jobID string, now time.Time) error {
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx, `UPDATE notification_jobs SET escalated_at = $2 WHERE id = $1`, jobID, Millis(now))
		return err
	})
}

// PostponeEscalation makes a failed escalation due again at next.
func (db *DB) PostponeEscalation(ctx context.Context, jobID string, next time.Time) error {
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx,
			`UPDATE notification_jobs SET next_attempt_at = $2 WHERE id = $1 AND escalated_at IS NULL`, jobID, Millis(next))
		return err
	})
}

// NotificationJobState returns the stored state of a job, or bokat.ErrNotFound.
func (db *DB) NotificationJobState(ctx context.Context, id string) (notify.JobState, error) {
	s := notify.JobState{ID: id}
	var next int64
	var escalated sql.NullInt64
	err := db.read.QueryRowContext(ctx,
		`SELECT status, attempts, next_attempt_at, last_error, escalated_at, api_request_id, trace_id
		   FROM notification_jobs WHERE id = $1`, id).
		Scan(&s.Status, &s.Attempts, &next, &s.LastError, &escalated, &s.APIRequestID, &s.TraceID)
	if err != nil {
		return notify.JobState{}, translate(err)
	}
	s.NextAttemptAt = FromMillis(next)
	s.Escalated = escalated.Valid
	return s, nil
}

// OldestUnrelayedOutboxEvent returns the creation time of the oldest live
// outbox event not yet relayed; ok is false when none waits. Test events
// never count in live metrics.
func (db *DB) OldestUnrelayedOutboxEvent(ctx context.Context) (time.Time, bool, error) {
	var oldest sql.NullInt64
	err := db.read.QueryRowContext(ctx,
		`SELECT MIN(created_at) FROM outbox_events WHERE relayed_at IS NULL AND mode = 'live'`).Scan(&oldest)
	if err != nil {
		return time.Time{}, false, translate(err)
	}
	return FromNullMillis(oldest), oldest.Valid, nil
}

// OldestDueNotification returns when the longest-waiting pending live
// notification job became due (at or before now); ok is false when none is.
// Test jobs never count in live metrics.
func (db *DB) OldestDueNotification(ctx context.Context, now time.Time) (time.Time, bool, error) {
	var oldest sql.NullInt64
	err := db.read.QueryRowContext(ctx,
		`SELECT MIN(next_attempt_at) FROM notification_jobs WHERE status = 'pending' AND next_attempt_at <= $1 AND mode = 'live'`,
		Millis(now)).Scan(&oldest)
	if err != nil {
		return time.Time{}, false, translate(err)
	}
	return FromNullMillis(oldest), oldest.Valid, nil
}
