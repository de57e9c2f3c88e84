package outbox

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
)

// statusGone is HTTP's 410 Gone: the endpoint asks to be forgotten. The
// outbox only reads the status a Deliverer got; it makes no HTTP requests
// and so does not import net/http (nor do the writes that name its Event).
const statusGone = 410

// Outcome is what one delivery attempt got.
type Outcome struct {
	// StatusCode is the HTTP status received; 0 when no response arrived.
	StatusCode int
	Latency    time.Duration
	// Err describes a failure (no response, a redirect, a non-2xx status);
	// empty on success. It must hold no secret.
	Err string
}

// Succeeded reports whether the attempt delivered the event: a 2xx answer.
func (o Outcome) Succeeded() bool {
	return o.Err == "" && o.StatusCode >= 200 && o.StatusCode < 300
}

// Deliverer makes one delivery attempt. It must return within its own
// timeout and must not follow redirects.
type Deliverer interface {
	Deliver(ctx context.Context, d ClaimedDelivery) Outcome
}

// RetrySchedule returns the waits before each retry after the first try:
// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. After the last retry fails the
// delivery is failed (it can still be replayed): eight attempts in all.
func RetrySchedule() []time.Duration {
	return []time.Duration{
		5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
	}
}

// Jitter spreads a retry wait uniformly over ±10 %, so that deliveries that
// failed together do not all retry at the same instant.
func Jitter(d time.Duration) time.Duration {
	spread := int64(d) / 5
	if spread <= 0 {
		return d
	}
	return d - time.Duration(spread/2) + time.Duration(rand.Int64N(spread+1))
}

// DispatcherConfig configures a Dispatcher. Zero fields take the defaults.
type DispatcherConfig struct {
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Concurrency is how many deliveries run at once; default 16.
	Concurrency int
	// Lease is how long a claim keeps other workers off a delivery; it must
	// well exceed the Deliverer's timeout. Default 2 minutes.
	Lease time.Duration
	// Interval is how often an idle dispatcher looks for due deliveries;
	// default 1 s (Kick wakes it earlier).
	Interval time.Duration
	// ErrorBackoff is how long the dispatcher waits after a claim that
	// failed to reach the store; default 2 s.
	ErrorBackoff time.Duration
	// Schedule is the retry schedule; default RetrySchedule().
	Schedule []time.Duration
	// Jitter spreads each retry wait; default Jitter.
	Jitter func(time.Duration) time.Duration
	Logger *slog.Logger
	// Heartbeat, when set, is beaten after every claim that reached the store.
	Heartbeat Heartbeat
	// Outcomes, when set, counts every recorded attempt by result.
	Outcomes Outcomes
}

// Outcomes counts recorded delivery attempts (telemetry.Metrics has it).
type Outcomes interface {
	// WebhookDelivery gets "delivered", "retry" or "failed".
	WebhookDelivery(result string)
}

// Dispatcher claims due deliveries and attempts them.
type Dispatcher struct {
	db   DeliveryStore
	send Deliverer
	cfg  DispatcherConfig
	kick chan struct{}
}

// NewDispatcher returns a Dispatcher over db sending with send.
func NewDispatcher(db DeliveryStore, send Deliverer, cfg DispatcherConfig) *Dispatcher {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 16
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 2 * time.Minute
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.ErrorBackoff <= 0 {
		cfg.ErrorBackoff = backoffOnError
	}
	if cfg.Schedule == nil {
		cfg.Schedule = RetrySchedule()
	}
	if cfg.Jitter == nil {
		cfg.Jitter = Jitter
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Dispatcher{db: db, send: send, cfg: cfg, kick: make(chan struct{}, 1)}
}

// Kick wakes an idle Run at once (new deliveries were created).
func (d *Dispatcher) Kick() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// claim claims up to n due deliveries under a fresh lease token.
func (d *Dispatcher) claim(ctx context.Context, n int) ([]ClaimedDelivery, error) {
	token, err := uuid.NewRandom()
	if err != nil {
		return nil, err
	}
	return d.db.ClaimWebhookDeliveries(ctx, d.cfg.Now(), d.cfg.Lease, n, token.String())
}

// RunOnce claims up to Concurrency due deliveries, attempts them
// concurrently and records the results; it returns how many it claimed.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	claimed, err := d.claim(ctx, d.cfg.Concurrency)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, c := range claimed {
		wg.Go(func() { d.attempt(ctx, c) })
	}
	wg.Wait()
	return len(claimed), nil
}

// Run dispatches until ctx ends, keeping up to Concurrency deliveries in
// flight. Deliveries in flight when ctx ends finish (each is bounded by the
// Deliverer's timeout) and are recorded before Run returns.
func (d *Dispatcher) Run(ctx context.Context) error {
	slots := make(chan struct{}, d.cfg.Concurrency)
	freed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	// In-flight work outlives ctx so that shutdown does not cut a delivery
	// in half and lose its record.
	work := context.WithoutCancel(ctx)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	if d.cfg.Heartbeat != nil {
		defer d.cfg.Heartbeat.Stop()
	}
	for {
		free := cap(slots) - len(slots)
		if free == 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-freed:
			}
			continue
		}
		claimed, err := d.claim(ctx, free)
		if err == nil && d.cfg.Heartbeat != nil {
			d.cfg.Heartbeat.Beat()
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			d.cfg.Logger.Error("claim webhook deliveries", "error", err.Error())
		}
		for _, c := range claimed {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() {
					<-slots
					select {
					case freed <- struct{}{}:
					default:
					}
				}()
				d.attempt(work, c)
			})
		}
		if err == nil && len(claimed) == free {
			continue // more may be due
		}
		wait := d.cfg.Interval
		if err != nil {
			wait = d.cfg.ErrorBackoff
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-d.kick:
		case <-timer.C:
		}
	}
}

// attempt makes one attempt of a claimed delivery and records it.
func (d *Dispatcher) attempt(ctx context.Context, c ClaimedDelivery) {
	log := d.cfg.Logger.With("delivery_id", c.ID, "webhook_id", c.WebhookID, "endpoint_id", c.EndpointID)
	if !c.EndpointActive {
		if err := d.db.CancelWebhookDelivery(ctx, c.ID, c.LeaseToken, "endpoint disabled or deleted", d.cfg.Now()); err != nil {
			log.Error("cancel webhook delivery", "error", err.Error())
		}
		return
	}
	start := d.cfg.Now()
	out := d.send.Deliver(ctx, c)
	now := d.cfg.Now()
	rec := Attempt{
		DeliveryID:  c.ID,
		LeaseToken:  c.LeaseToken,
		AttemptedAt: start,
		StatusCode:  out.StatusCode,
		Latency:     out.Latency,
		Error:       out.Err,
		Now:         now,
	}
	number := c.Attempts + 1
	switch {
	case out.Succeeded():
		rec.Status = DeliveryDelivered
	case out.StatusCode == statusGone:
		rec.Status = DeliveryFailed
		rec.DisableEndpoint = "the endpoint answered 410 Gone"
	case number > len(d.cfg.Schedule):
		rec.Status = DeliveryFailed
	default:
		rec.Status = DeliveryPending
		rec.NextAttemptAt = now.Add(d.cfg.Jitter(d.cfg.Schedule[number-1]))
	}
	if _, err := d.db.RecordWebhookAttempt(ctx, rec); err != nil {
		log.Error("record webhook attempt", "error", err.Error())
		return
	}
	if d.cfg.Outcomes != nil && !c.Mode.Test() {
		d.cfg.Outcomes.WebhookDelivery(outcomeName(rec.Status))
	}
	if rec.Status != DeliveryDelivered {
		log.Warn("webhook delivery attempt failed", "attempt", number, "status_code", out.StatusCode,
			"error", out.Err, "next_status", rec.Status)
	}
}

// outcomeName is the result an attempt that left a delivery in status s is
// counted under.
func outcomeName(s string) string {
	switch s {
	case DeliveryDelivered:
		return "delivered"
	case DeliveryFailed:
		return "failed"
	default:
		return "retry"
	}
}
