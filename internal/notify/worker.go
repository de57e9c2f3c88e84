package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"bokat"
)

// DefaultBackoff returns the wait after each failed attempt: the first retry
// comes 1 minute after the first failure, the last 6 hours after the fifth;
// a sixth failure is final. Each call returns a new slice, so no caller can
// change another's schedule.
func DefaultBackoff() []time.Duration {
	return []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour}
}

// Outcomes counts notification outcomes (telemetry.Metrics has it).
type Outcomes interface {
	Notification(recipient, result string)
}

// Heartbeat is how the worker shows it is alive (telemetry.Heartbeat).
type Heartbeat interface {
	Beat()
	Stop()
}

// WorkerConfig configures a Worker. Store, Sender, Organizer, Logger and
// at least one of Bookings and Requests are required; UIDDomain with
// Bookings.
type WorkerConfig struct {
	Store Store
	// Bookings delivers jobs about bookings; while nil they wait for a
	// worker that has it.
	Bookings BookingSource
	// Requests delivers request.created jobs of provider follow-up
	// requests; while nil they wait for a worker that has it.
	Requests RequestSource
	// FollowUp raises booking.provider_action_required; while nil, failed
	// provider jobs wait for it (nothing is lost).
	FollowUp ProviderFollowUp
	Sender   Sender
	// Capture keeps the messages of test-mode jobs, which Sender never
	// sees (issue 25): no real e-mail is sent for test activity. While nil,
	// test jobs are skipped unsent.
	Capture Capturer
	// Organizer is the address invitations come from (the mail sender).
	Organizer string
	// UIDDomain qualifies invitation UIDs (booking id @ UIDDomain); it must
	// be the domain of the provider calendar feed's UIDs (calfeed.UIDDomain
	// of the base URL) so that a calendar holds each booking once. Required
	// with Bookings.
	UIDDomain string
	Logger    *slog.Logger
	Now       func() time.Time
	Outcomes  Outcomes
	Heartbeat Heartbeat
	// Backoff is the wait after each failed attempt; DefaultBackoff when nil.
	// A job gets len(Backoff)+1 attempts.
	Backoff []time.Duration
	// Lease hides a claimed job from other workers; 2m by default. It must
	// exceed the sender's timeout.
	Lease time.Duration
	// Batch is how many jobs one claim takes; 10 by default.
	Batch int
	// Poll is the pause when no job is due; 1s by default.
	Poll time.Duration
	// Waker, when set, wakes an idle worker before Poll ends (jobs were
	// committed).
	Waker *Waker
}

// Waker wakes an idle Worker at once: the writes that queue notification
// jobs (booking.Lifecycle, followup.Service) call Wake after their
// transaction commits, as the outbox relay kicks the webhook dispatcher.
// It is made before the worker and the writers, so that neither needs the
// other (the worker raises provider follow-ups through the lifecycle).
type Waker struct{ c chan struct{} }

// NewWaker returns a Waker for one worker.
func NewWaker() *Waker { return &Waker{c: make(chan struct{}, 1)} }

// Wake wakes the worker if it is idle, and otherwise makes its next wait
// end at once. It never blocks.
func (k *Waker) Wake() {
	select {
	case k.c <- struct{}{}:
	default:
	}
}

// Worker delivers notification jobs. Several workers (processes) may share
// one PostgreSQL database; on SQLite run one.
type Worker struct {
	cfg   WorkerConfig
	c     composer
	kinds Kinds
}

// NewWorker returns a worker for the configuration.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.Store == nil || (cfg.Bookings == nil && cfg.Requests == nil) || cfg.Sender == nil || cfg.Organizer == "" || cfg.Logger == nil {
		return nil, errors.New("notify: Store, Bookings or Requests, Sender, Organizer and Logger are required")
	}
	if cfg.Bookings != nil && cfg.UIDDomain == "" {
		return nil, errors.New("notify: UIDDomain is required with Bookings")
	}
	var kinds Kinds
	if cfg.Bookings != nil {
		kinds |= BookingJobs
	}
	if cfg.Requests != nil {
		kinds |= RequestJobs
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Backoff == nil {
		cfg.Backoff = DefaultBackoff()
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 2 * time.Minute
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 10
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	return &Worker{cfg: cfg, c: composer{organizer: cfg.Organizer, uidDomain: cfg.UIDDomain, now: cfg.Now}, kinds: kinds}, nil
}

// Run delivers jobs until ctx ends, then returns ctx's error.
func (w *Worker) Run(ctx context.Context) error {
	if w.cfg.Heartbeat != nil {
		defer w.cfg.Heartbeat.Stop()
	}
	var wake <-chan struct{} // nil without a Waker: never ready
	if w.cfg.Waker != nil {
		wake = w.cfg.Waker.c
	}
	for {
		w.beat()
		n, err := w.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			w.cfg.Logger.WarnContext(ctx, "notification worker: pass failed", "error", redact(err.Error()))
		}
		if n >= w.cfg.Batch && err == nil {
			continue // more may be due
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(w.cfg.Poll):
		case <-wake:
		}
	}
}

func (w *Worker) beat() {
	if w.cfg.Heartbeat != nil {
		w.cfg.Heartbeat.Beat()
	}
}

// RunOnce claims one batch of due jobs (of the kinds it has a source for)
// and delivers them, then raises booking.provider_action_required for
// booking provider jobs that failed for good. It returns how many jobs it
// claimed.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	jobs, err := w.cfg.Store.ClaimNotificationJobsOf(ctx, w.kinds, w.cfg.Now(), w.cfg.Lease, w.cfg.Batch)
	if err != nil {
		return 0, fmt.Errorf("claim notification jobs: %w", err)
	}
	for _, j := range jobs {
		w.deliver(ctx, j)
		w.beat()
	}
	return len(jobs), w.escalate(ctx)
}

// outcome is how one attempt ended.
type outcome struct {
	status string // bokat.Notification* ; pending means retry
	next   time.Time
	reason string // stored as last_error; no contact data
}

// deliver makes one attempt at job j and records its outcome.
func (w *Worker) deliver(ctx context.Context, j ClaimedJob) {
	if j.RequestID != "" {
		w.deliverRequest(ctx, j)
		return
	}
	log := w.cfg.Logger.With("job_id", j.ID, "booking_id", j.BookingID, "outbox_id", j.OutboxID,
		"event_type", j.EventType, "recipient", j.Recipient, "attempt", j.Attempt,
		"api_request_id", j.APIRequestID, "trace_id", j.TraceID)
	o := w.attempt(ctx, j)
	w.record(ctx, log, j, o, bookingLogs, func(ctx context.Context, tx Tx) error {
		if !supported(j.EventType) {
			return nil
		}
		latest, err := tx.LatestNotificationOutcome(ctx, j.BookingID, j.Recipient)
		if err != nil {
			return fmt.Errorf("latest outcome: %w", err)
		}
		return tx.SetConfirmationStatus(ctx, j.BookingID, j.Recipient, latest)
	})
}

// record stores outcome o of an attempt at job j in one transaction, even
// when ctx ended during the attempt, and reports it: a retry keeps the job
// pending until o.next; any other outcome ends the job, and ended writes
// what the job's kind keeps of its end in the same transaction.
func (w *Worker) record(ctx context.Context, log *slog.Logger, j ClaimedJob, o outcome, lines outcomeLogs,
	ended func(ctx context.Context, tx Tx) error) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	now := w.cfg.Now()
	err := w.cfg.Store.InTx(fctx, func(tx Tx) error {
		if o.status == bokat.NotificationPending {
			return tx.RetryNotificationJob(fctx, j, o.next, o.reason, now)
		}
		if err := tx.FinishNotificationJob(fctx, j, o.status, o.reason, now); err != nil {
			return err
		}
		return ended(fctx, tx)
	})
	w.report(ctx, log, j.Recipient, !j.Mode.Test(), o, err, lines)
}

// outcomeLogs are the log messages of one kind of job's outcomes.
type outcomeLogs struct{ sent, skipped, retry, failed string }

var bookingLogs = outcomeLogs{
	sent: "notification sent", skipped: "notification skipped",
	retry: "notification attempt failed; retry scheduled", failed: "notification failed for good",
}

// report logs and counts the outcome of one attempt once recording it
// returned err. When recording failed the lease runs out and the job is
// tried again, so nothing is counted; nor is a test-mode job's outcome
// (counted false): test activity never counts in the live metrics.
func (w *Worker) report(ctx context.Context, log *slog.Logger, recipient string, counted bool, o outcome, err error, lines outcomeLogs) {
	switch {
	case errors.Is(err, ErrLeaseLost):
		log.WarnContext(ctx, "notification outcome not recorded: another worker holds the job now")
		return
	case err != nil:
		log.ErrorContext(ctx, "notification outcome not recorded", "error", redact(err.Error()))
		return
	}
	result := o.status
	if o.status == bokat.NotificationPending {
		result = "retry"
	}
	if w.cfg.Outcomes != nil && counted {
		w.cfg.Outcomes.Notification(recipient, result)
	}
	switch result {
	case bokat.NotificationSent:
		log.InfoContext(ctx, lines.sent)
	case bokat.NotificationSkipped:
		log.InfoContext(ctx, lines.skipped, "reason", o.reason)
	case "retry":
		log.WarnContext(ctx, lines.retry, "error", o.reason, "next_attempt_at", o.next)
	default:
		log.ErrorContext(ctx, lines.failed, "error", o.reason)
	}
}

// attempt loads the booking, composes the message and sends it.
func (w *Worker) attempt(ctx context.Context, j ClaimedJob) outcome {
	if !supported(j.EventType) {
		return outcome{status: bokat.NotificationSkipped, reason: "no message for event type " + j.EventType}
	}
	b, err := w.cfg.Bookings.NotificationBooking(ctx, j.BookingID)
	switch {
	case errors.Is(err, bokat.ErrNotFound):
		return outcome{status: bokat.NotificationFailed, reason: "booking not found"}
	case err != nil:
		return w.retry(j, "loading the booking failed: "+redact(err.Error()))
	}
	ev := bokat.EventType(j.EventType)
	if b.Status == "cancelled" && ev != bokat.EventBookingCancelled {
		return outcome{status: bokat.NotificationSkipped, reason: "superseded by the cancellation"}
	}
	to := b.CustomerEmail
	if j.Recipient == bokat.RecipientProvider {
		to = b.ProviderEmail
	}
	if to == "" {
		return outcome{status: bokat.NotificationSkipped, reason: "no e-mail address"}
	}
	msg, err := w.c.compose(b, j.EventType, j.Reason, j.Recipient)
	if err != nil {
		return outcome{status: bokat.NotificationFailed, reason: "compose: " + redact(err.Error())}
	}
	err = w.send(ctx, j, msg)
	if errors.Is(err, errNotCaptured) {
		return outcome{status: bokat.NotificationSkipped, reason: err.Error()}
	}
	if err == nil {
		return outcome{status: bokat.NotificationSent}
	}
	var se *SendError
	if !errors.As(err, &se) {
		se = &SendError{Temporary: true, Summary: redact(err.Error())}
	}
	if !se.Temporary {
		return outcome{status: bokat.NotificationFailed, reason: se.Summary}
	}
	return w.retry(j, se.Summary)
}

// retry schedules the next attempt after a temporary failure, or fails the
// job when its attempts are spent.
func (w *Worker) retry(j ClaimedJob, reason string) outcome {
	if j.Attempt > len(w.cfg.Backoff) {
		return outcome{status: bokat.NotificationFailed, reason: fmt.Sprintf("%s (after %d attempts)", reason, j.Attempt)}
	}
	return outcome{status: bokat.NotificationPending, next: w.cfg.Now().Add(w.cfg.Backoff[j.Attempt-1]), reason: reason}
}

// escalate raises booking.provider_action_required for provider jobs that
// failed for good, each once (at least once across crashes).
func (w *Worker) escalate(ctx context.Context) error {
	if w.cfg.FollowUp == nil {
		return nil
	}
	claims, err := w.cfg.Store.ClaimEscalations(ctx, w.cfg.Now(), w.cfg.Lease, w.cfg.Batch)
	if err != nil {
		return fmt.Errorf("claim escalations: %w", err)
	}
	var errs []error
	for _, c := range claims {
		log := w.cfg.Logger.With("job_id", c.JobID, "booking_id", c.BookingID,
			"api_request_id", c.APIRequestID, "trace_id", c.TraceID)
		if err := w.cfg.FollowUp.ProviderActionRequired(ctx, c.BookingID); err != nil {
			log.WarnContext(ctx, "booking.provider_action_required not raised; will retry", "error", redact(err.Error()))
			errs = append(errs, w.cfg.Store.PostponeEscalation(ctx, c.JobID, w.cfg.Now().Add(time.Minute)))
			continue
		}
		if err := w.cfg.Store.MarkEscalated(ctx, c.JobID, w.cfg.Now()); err != nil {
			errs = append(errs, err)
			continue
		}
		log.InfoContext(ctx, "booking.provider_action_required raised: the provider could not be notified")
	}
	return errors.Join(errs...)
}

// Capturer keeps the message of a test-mode job, made at the instant at
// of the server's clock, where its partner reads it, instead of sending
// it; the partner reads it stamped on its own test clock. Errors are
// *SendError or store errors.
type Capturer interface {
	CaptureMessage(ctx context.Context, j ClaimedJob, m Message, at time.Time) error
}

// errNotCaptured: a test-mode message on a worker without a Capturer is
// dropped unsent.
var errNotCaptured = errors.New("test mode: not sent, and no capture configured")

// send sends the message of job j, or captures it when j is a test-mode
// job: a test job never reaches Sender, whatever its address.
func (w *Worker) send(ctx context.Context, j ClaimedJob, m Message) error {
	if j.Mode.Test() {
		if m.To == bokat.TestUnreachableEmail {
			return &SendError{Summary: "the test provider " + bokat.TestProviderUnreachable + " never receives its messages"}
		}
		if w.cfg.Capture == nil {
			return errNotCaptured
		}
		return w.cfg.Capture.CaptureMessage(ctx, j, m, w.cfg.Now())
	}
	return w.cfg.Sender.Send(ctx, m)
}
