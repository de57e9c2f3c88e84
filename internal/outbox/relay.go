package outbox

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// RelayConfig configures a Relay. Zero fields take the defaults.
type RelayConfig struct {
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Batch is how many events one transaction relays; default 100.
	Batch int
	// Interval is how often the relay looks for new events when idle (a
	// read-only query); default 100ms.
	Interval time.Duration
	// ErrorBackoff is how long the relay waits after a pass that failed to
	// reach the store; default 2 s.
	ErrorBackoff time.Duration
	Logger       *slog.Logger
	// OnRelayed, when set, is called after a transaction created deliveries
	// (the serve process wakes its dispatcher with it).
	OnRelayed func()
	// Heartbeat, when set, is beaten after every pass that reached the
	// store, so readiness can tell a stuck or failing relay.
	Heartbeat Heartbeat
}

// Heartbeat is how a worker shows readiness checks that it is alive.
type Heartbeat interface {
	Beat()
	Stop()
}

// Relay turns new outbox events into webhook deliveries.
type Relay struct {
	db  Store
	cfg RelayConfig
}

// NewRelay returns a Relay over db.
func NewRelay(db Store, cfg RelayConfig) *Relay {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	if cfg.ErrorBackoff <= 0 {
		cfg.ErrorBackoff = backoffOnError
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Relay{db: db, cfg: cfg}
}

// RunOnce relays up to one batch of events in one transaction: for each
// event, one pending delivery (sharing one new Webhook-Id) per enabled
// endpoint of the event's owner subscribed to its type, and the event marked
// relayed. It returns how many events it relayed. Events whose owner has no
// such endpoint are marked relayed with no delivery; they can be replayed.
func (r *Relay) RunOnce(ctx context.Context) (events int, err error) {
	if pending, err := r.db.HasUnrelayedOutboxEvents(ctx); err != nil || !pending {
		return 0, err
	}
	created := 0
	err = r.db.InTx(ctx, func(tx Tx) error {
		events, created = 0, 0
		batch, err := tx.ClaimUnrelayedOutboxEvents(ctx, r.cfg.Batch)
		if err != nil {
			return err
		}
		now := r.cfg.Now()
		type key struct{ client, user, typ string }
		subscribed := map[key][]string{}
		for _, ev := range batch {
			k := key{ev.OwnerClientID, ev.OwnerUserID, ev.EventType}
			eps, ok := subscribed[k]
			if !ok {
				if eps, err = tx.SubscribedWebhookEndpointIDs(ctx, k.client, k.user, k.typ); err != nil {
					return err
				}
				subscribed[k] = eps
			}
			if len(eps) > 0 {
				webhookID, err := uuid.NewV7()
				if err != nil {
					return err
				}
				for _, endpointID := range eps {
					id, err := uuid.NewV7()
					if err != nil {
						return err
					}
					ok, err := tx.InsertWebhookDelivery(ctx, Delivery{
						ID: id.String(), WebhookID: webhookID.String(), OutboxID: ev.ID, EndpointID: endpointID,
						Origin: OriginRelay, NextAttemptAt: now, CreatedAt: now,
					})
					if err != nil {
						return err
					}
					if ok {
						created++
					}
				}
			}
			if err := tx.MarkOutboxEventRelayed(ctx, ev.ID, now); err != nil {
				return err
			}
			events++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if created > 0 && r.cfg.OnRelayed != nil {
		r.cfg.OnRelayed()
	}
	return events, nil
}

// Run relays until ctx ends: a full batch is followed at once by the next,
// otherwise the relay waits Interval. Store failures are logged and retried.
func (r *Relay) Run(ctx context.Context) error {
	t := time.NewTimer(0)
	defer t.Stop()
	if r.cfg.Heartbeat != nil {
		defer r.cfg.Heartbeat.Stop()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		n, err := r.RunOnce(ctx)
		wait := r.cfg.Interval
		switch {
		case err != nil && ctx.Err() == nil:
			r.cfg.Logger.Error("outbox relay failed", "error", err.Error())
			wait = r.cfg.ErrorBackoff
		case n == r.cfg.Batch:
			wait = 0
		}
		if err == nil && r.cfg.Heartbeat != nil {
			r.cfg.Heartbeat.Beat()
		}
		t.Reset(wait)
	}
}

// backoffOnError is how long a loop waits after a store failure unless
// configured otherwise.
const backoffOnError = 2 * time.Second
