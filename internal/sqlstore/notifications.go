package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ClaimedNotificationJob is a notification job leased to one worker. Attempt
// is the attempt number this claim started (1 for the first); it fences the
// job: only the holder of the latest claim can finish it. A job is about a
// booking (BookingID and OutboxID set) or about a provider follow-up request
// (RequestID set).
type ClaimedNotificationJob struct {
	ID           string
	OutboxID     string
	BookingID    string
	RequestID    string
	EventType    string
	Recipient    string
	Attempt      int
	APIRequestID string
	TraceID      string
	CreatedAt    time.Time
}

// NotificationKinds selects the kinds of notification jobs a claim takes.
type NotificationKinds uint8

// Kinds of notification jobs.
const (
	// BookingNotifications are jobs about a booking (booking_id set).
	BookingNotifications NotificationKinds = 1 << iota
	// RequestNotifications are jobs about a follow-up request (request_id set).
	RequestNotifications
	// AllNotifications is both kinds.
	AllNotifications = BookingNotifications | RequestNotifications
)

// ClaimNotificationJobs leases up to limit pending jobs of both kinds due
// at now: each gets its attempt counter raised and is hidden from other
// workers until now+lease (if its worker dies, the job becomes due again
// then). On PostgreSQL concurrent workers skip each other's rows (FOR UPDATE
// SKIP LOCKED); on SQLite the claim runs in the single write transaction.
func (db *DB) ClaimNotificationJobs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]ClaimedNotificationJob, error) {
	return db.ClaimNotificationJobsOf(ctx, AllNotifications, now, lease, limit)
}

// ClaimNotificationJobsOf is ClaimNotificationJobs for the given kinds only
// (a worker without a booking store leaves booking jobs for one that has it).
func (db *DB) ClaimNotificationJobsOf(ctx context.Context, kinds NotificationKinds, now time.Time, lease time.Duration, limit int) ([]ClaimedNotificationJob, error) {
	lock := ""
	if db.engine == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var kind string
	switch kinds & AllNotifications {
	case AllNotifications:
	case BookingNotifications:
		kind = " AND booking_id IS NOT NULL"
	case RequestNotifications:
		kind = " AND request_id IS NOT NULL"
	default:
		return nil, nil
	}
	var jobs []ClaimedNotificationJob
	err := db.InTx(ctx, func(tx *Tx) error {
		jobs = jobs[:0]
		rows, err := tx.tx.QueryContext(ctx,
			`UPDATE notification_jobs SET attempts = attempts + 1, next_attempt_at = $2, updated_at = $1
			  WHERE id IN (SELECT id FROM notification_jobs
			                WHERE status = 'pending' AND next_attempt_at <= $1`+kind+`
			                ORDER BY next_attempt_at, id LIMIT $3`+lock+`)
			  RETURNING id, outbox_id, booking_id, request_id, event_type, recipient, attempts, api_request_id, trace_id,
			            created_at`,
			Millis(now), Millis(now.Add(lease)), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				j                          ClaimedNotificationJob
				outbox, booking, requestID sql.NullString
				created                    int64
			)
			if err := rows.Scan(&j.ID, &outbox, &booking, &requestID, &j.EventType, &j.Recipient, &j.Attempt,
				&j.APIRequestID, &j.TraceID, &created); err != nil {
				return err
			}
			j.OutboxID, j.BookingID, j.RequestID = outbox.String, booking.String, requestID.String
			j.CreatedAt = FromMillis(created)
			jobs = append(jobs, j)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, translate(err)
	}
	return jobs, nil
}

// ErrLeaseLost is returned when a job's claim was overtaken (its lease ran
// out and another worker claimed it) or the job is no longer pending.
var ErrLeaseLost = errors.New("notification job lease lost")

// FinishNotificationJob ends a claimed job with status sent, skipped or
// failed. lastError must hold no contact data. It returns ErrLeaseLost when
// the claim is no longer the job's latest. A failed job becomes due for
// escalation at now.
func (tx *Tx) FinishNotificationJob(ctx context.Context, j ClaimedNotificationJob, status, lastError string, now time.Time) error {
	res, err := tx.tx.ExecContext(ctx,
		`UPDATE notification_jobs SET status = $3, last_error = $4, updated_at = $5, next_attempt_at = $5
		  WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
		j.ID, j.Attempt, status, lastError, Millis(now))
	return fenced(res, err)
}

// RetryNotificationJob keeps a claimed job pending until next, recording
// why this attempt failed. It returns ErrLeaseLost like FinishNotificationJob.
func (tx *Tx) RetryNotificationJob(ctx context.Context, j ClaimedNotificationJob, next time.Time, lastError string, now time.Time) error {
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
		return ErrLeaseLost
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

// EscalationClaim is a failed provider job leased for raising
// booking.provider_action_required.
type EscalationClaim struct {
	JobID        string
	BookingID    string
	APIRequestID string
	TraceID      string
}

// ClaimEscalations leases up to limit failed provider jobs of bookings that
// have not raised booking.provider_action_required yet, hiding them from
// other workers until now+lease. Jobs of follow-up requests never escalate:
// there is no booking to act on.
func (db *DB) ClaimEscalations(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]EscalationClaim, error) {
	lock := ""
	if db.engine == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var out []EscalationClaim
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
			var c EscalationClaim
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

// NotificationJobState is a job as stored, for tests and diagnostics.
type NotificationJobState struct {
	ID            string
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	Escalated     bool
	APIRequestID  string
	TraceID       string
}

// NotificationJobState returns the stored state of a job, or bokat.ErrNotFound.
func (db *DB) NotificationJobState(ctx context.Context, id string) (NotificationJobState, error) {
	s := NotificationJobState{ID: id}
	var next int64
	var escalated sql.NullInt64
	err := db.read.QueryRowContext(ctx,
		`SELECT status, attempts, next_attempt_at, last_error, escalated_at, api_request_id, trace_id
		   FROM notification_jobs WHERE id = $1`, id).
		Scan(&s.Status, &s.Attempts, &next, &s.LastError, &escalated, &s.APIRequestID, &s.TraceID)
	if err != nil {
		return NotificationJobState{}, translate(err)
	}
	s.NextAttemptAt = FromMillis(next)
	s.Escalated = escalated.Valid
	return s, nil
}

// OldestUnrelayedOutboxEvent returns the creation time of the oldest outbox
// event not yet relayed; ok is false when none waits.
func (db *DB) OldestUnrelayedOutboxEvent(ctx context.Context) (time.Time, bool, error) {
	var oldest sql.NullInt64
	err := db.read.QueryRowContext(ctx,
		`SELECT MIN(created_at) FROM outbox_events WHERE relayed_at IS NULL`).Scan(&oldest)
	if err != nil {
		return time.Time{}, false, translate(err)
	}
	return FromNullMillis(oldest), oldest.Valid, nil
}

// OldestDueNotification returns when the longest-waiting pending
// notification job became due (at or before now); ok is false when none is.
func (db *DB) OldestDueNotification(ctx context.Context, now time.Time) (time.Time, bool, error) {
	var oldest sql.NullInt64
	err := db.read.QueryRowContext(ctx,
		`SELECT MIN(next_attempt_at) FROM notification_jobs WHERE status = 'pending' AND next_attempt_at <= $1`,
		Millis(now)).Scan(&oldest)
	if err != nil {
		return time.Time{}, false, translate(err)
	}
	return FromNullMillis(oldest), oldest.Valid, nil
}
