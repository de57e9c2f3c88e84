package notify

import (
	"context"
	"errors"
	"time"

	"bokat"
)

// Store is what the worker needs of the database outside a transaction.
type Store interface {
	// InTx runs fn in one write transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(Tx) error) error
	// ClaimNotificationJobsOf leases up to limit pending jobs of the given
	// kinds due at now, each hidden from other workers until now+lease and
	// with its attempt counter raised.
	ClaimNotificationJobsOf(ctx context.Context, kinds Kinds, now time.Time, lease time.Duration, limit int) ([]ClaimedJob, error)
	// SetRequestCandidateStatus records one candidate provider's outcome
	// of a follow-up request, in a transaction of its own.
	SetRequestCandidateStatus(ctx context.Context, requestID, providerID, status string, now time.Time) error
	// ClaimEscalations leases up to limit failed provider jobs of bookings
	// that have not raised booking.provider_action_required yet.
	ClaimEscalations(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]EscalationClaim, error)
	// MarkEscalated records that the job's booking.provider_action_required
	// was raised.
	MarkEscalated(ctx context.Context, jobID string, now time.Time) error
	// PostponeEscalation makes a failed escalation due again at next.
	PostponeEscalation(ctx context.Context, jobID string, next time.Time) error
}

// Tx is the write transaction that records the outcome of one attempt.
type Tx interface {
	// FinishNotificationJob ends a claimed job with status sent, skipped or
	// failed; it returns ErrLeaseLost when the claim is no longer the
	// job's latest. lastError must hold no contact data.
	FinishNotificationJob(ctx context.Context, j ClaimedJob, status, lastError string, now time.Time) error
	// RetryNotificationJob keeps a claimed job pending until next; it
	// returns ErrLeaseLost like FinishNotificationJob.
	RetryNotificationJob(ctx context.Context, j ClaimedJob, next time.Time, lastError string, now time.Time) error
	// LatestNotificationOutcome returns the status of the most recently
	// queued job for the booking and recipient that has ended, or an error
	// wrapping bokat.ErrNotFound when none has.
	LatestNotificationOutcome(ctx context.Context, bookingID, recipient string) (string, error)
	// EndPendingRequestCandidates gives every candidate provider of the
	// request still pending the status.
	EndPendingRequestCandidates(ctx context.Context, requestID, status string) error
	// SetConfirmationStatus writes status (bokat.NotificationSent, Skipped
	// or Failed) to the booking's customer or provider confirmation status
	// (recipient bokat.RecipientCustomer or bokat.RecipientProvider), the
	// latest outcome of the messages to that party, in the transaction
	// that ends the job. It returns an error wrapping bokat.ErrNotFound for
	// an unknown booking.
	SetConfirmationStatus(ctx context.Context, bookingID, recipient, status string) error
}

// ErrLeaseLost is returned when a job's claim was overtaken (its lease ran
// out and another worker claimed it) or the job is no longer pending.
var ErrLeaseLost = errors.New("notification job lease lost")

// ClaimedJob is a job leased to one worker. Attempt is the attempt number
// this claim started (1 for the first); it fences the job: only the holder
// of the latest claim can finish it. A job is about a booking (BookingID
// and OutboxID set) or about a provider follow-up request (RequestID set).
type ClaimedJob struct {
	ID        string
	OutboxID  string
	BookingID string
	RequestID string
	EventType string
	// Reason is the event's data.reason (bokat.ReasonProviderCancelled on
	// a cancellation by the provider), "" when it has none.
	Reason       string
	Recipient    string
	Attempt      int
	APIRequestID string
	TraceID      string
	CreatedAt    time.Time
	// Mode is the job's realm: a test job is captured, never sent.
	Mode bokat.Mode
}

// Kinds selects the kinds of jobs a claim takes.
type Kinds uint8

// Kinds of jobs.
const (
	// BookingJobs are jobs about a booking (BookingID set).
	BookingJobs Kinds = 1 << iota
	// RequestJobs are jobs about a follow-up request (RequestID set).
	RequestJobs
	// AllJobs is both kinds.
	AllJobs = BookingJobs | RequestJobs
)

// EscalationClaim is a failed provider job leased for raising
// booking.provider_action_required.
type EscalationClaim struct {
	JobID        string
	BookingID    string
	APIRequestID string
	TraceID      string
}

// JobState is a job as stored, for tests and diagnostics.
type JobState struct {
	ID            string
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	Escalated     bool
	APIRequestID  string
	TraceID       string
}
