// Package webhook manages webhook endpoints and sends webhook deliveries:
// registration behind an SSRF guard (public HTTPS on port 443, every resolved
// address public, checked again on the address dialled), signing secrets
// sealed at rest, the signed HTTP delivery attempt, and replays. The outbox
// package drives deliveries; receivers verify them with package
// bokat/webhookverify.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/outbox"
)

// MaxEndpointsPerOwner is how many webhook endpoints one owner (a client,
// or a client and signed-in user) may have.
const MaxEndpointsPerOwner = 20

// ServiceConfig configures a Service.
type ServiceConfig struct {
	Store Store
	Guard *Guard
	Keys  *Keyring
	// Now is the clock; default time.Now.
	Now func() time.Time
	// OnQueued, when set, is called after a replay queued deliveries (the
	// serve process wakes its dispatcher with it).
	OnQueued func()
}

// Service is the owner-facing side of webhooks: register, list, delete,
// replay. Every method acts only on the principal's own endpoints and events:
// those of its client, and for delegated tokens of its user.
type Service struct {
	db       Store
	guard    *Guard
	keys     *Keyring
	now      func() time.Time
	onQueued func()
}

// NewService returns a Service.
func NewService(cfg ServiceConfig) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{db: cfg.Store, guard: cfg.Guard, keys: cfg.Keys, now: cfg.Now, onQueued: cfg.OnQueued}
}

// RegisterEndpoint checks the destination, stores a new endpoint with a fresh
// signing secret (sealed), and returns the endpoint and the secret, which is
// never shown again. A rejected destination is a *bokat.Error with code
// webhook_destination_rejected whose detail and issues give the reason.
func (s *Service) RegisterEndpoint(ctx context.Context, p bokat.Principal, rawURL string, types []bokat.EventType) (bokat.WebhookEndpoint, string, error) {
	if err := checkEventTypes(types); err != nil {
		return bokat.WebhookEndpoint{}, "", err
	}
	u, err := s.guard.CheckURL(ctx, rawURL)
	if err != nil {
		var rej *RejectedError
		if errors.As(err, &rej) {
			return bokat.WebhookEndpoint{}, "", &bokat.Error{
				Code:         bokat.CodeWebhookDestinationRejected,
				Detail:       "The webhook destination was rejected: " + rej.Reason + ".",
				Issues:       []string{"url: " + rej.Reason},
				SafeNextStep: "Register a public https:// URL on port 443 whose host name resolves only to public addresses.",
				Err:          rej,
			}
		}
		return bokat.WebhookEndpoint{}, "", err
	}
	id, err := newEndpointID()
	if err != nil {
		return bokat.WebhookEndpoint{}, "", err
	}
	secret := NewSigningSecret()
	keyID, sealed, err := s.keys.Seal([]byte(secret), secretContext(id))
	if err != nil {
		return bokat.WebhookEndpoint{}, "", fmt.Errorf("seal signing secret: %w", err)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	row := Endpoint{
		ID: id, OwnerClientID: p.ClientID, OwnerUserID: p.UserID, Mode: p.Realm(), URL: u.String(), EventTypes: names,
		SigningKeyID: newSigningKeyID(), SecretKeyID: keyID, SecretCiphertext: sealed, CreatedAt: now, UpdatedAt: now,
	}
	err = s.db.InTx(ctx, func(tx Tx) error {
		return tx.InsertWebhookEndpoint(ctx, row, MaxEndpointsPerOwner)
	})
	if errors.Is(err, ErrEndpointLimit) {
		return bokat.WebhookEndpoint{}, "", &bokat.Error{
			Code:         bokat.CodeWebhookEndpointLimitReached,
			Detail:       fmt.Sprintf("A client may have at most %d webhook endpoints.", MaxEndpointsPerOwner),
			SafeNextStep: "Delete an endpoint that is no longer used, then register again.",
		}
	}
	if err != nil {
		return bokat.WebhookEndpoint{}, "", err
	}
	return endpointOf(row), secret, nil
}

// newEndpointID returns a new endpoint id: bokat.WebhookEndpointIDPrefix
// followed by a UUIDv7 in 32 hex digits.
func newEndpointID() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	return bokat.WebhookEndpointIDPrefix + strings.ReplaceAll(id.String(), "-", ""), nil
}

// validEndpointID reports whether id has the form of an endpoint id: the
// prefixed form, or the bare UUID endpoints registered before it had a
// prefix keep (stored, sealed and shown as they were). Anything else is
// no endpoint and never reaches the store.
func validEndpointID(id string) bool {
	if hexID, ok := strings.CutPrefix(id, bokat.WebhookEndpointIDPrefix); ok {
		return len(hexID) == 32 && strings.Trim(hexID, "0123456789abcdef") == ""
	}
	return len(id) == 36 && uuid.Validate(id) == nil
}

func checkEventTypes(types []bokat.EventType) error {
	if len(types) == 0 {
		return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "At least one event type is required.",
			Issues: []string{"event_types: must have at least 1 item"}}
	}
	for i, t := range types {
		if !slices.Contains(bokat.EventTypes(), t) {
			return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "Unknown event type.",
				Issues: []string{fmt.Sprintf("event_types[%d]: must be one of the event types", i)}}
		}
		if slices.Contains(types[:i], t) {
			return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "Event types must be unique.",
				Issues: []string{"event_types: items must be unique"}}
		}
	}
	return nil
}

func endpointOf(e Endpoint) bokat.WebhookEndpoint {
	types := make([]bokat.EventType, len(e.EventTypes))
	for i, t := range e.EventTypes {
		types[i] = bokat.EventType(t)
	}
	return bokat.WebhookEndpoint{
		ID: e.ID, URL: e.URL, EventTypes: types, SigningKeyID: e.SigningKeyID,
		Enabled: e.DisabledAt.IsZero(), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}
}

// ListEndpoints returns the principal's endpoints, oldest first, without
// secrets.
func (s *Service) ListEndpoints(ctx context.Context, p bokat.Principal) ([]bokat.WebhookEndpoint, error) {
	rows, err := s.db.WebhookEndpoints(ctx, p.ClientID, p.UserID)
	if err != nil {
		return nil, err
	}
	out := make([]bokat.WebhookEndpoint, len(rows))
	for i, r := range rows {
		out[i] = endpointOf(r)
	}
	return out, nil
}

// DeleteEndpoint deletes the principal's endpoint and cancels its pending
// deliveries. An endpoint that is unknown or not the principal's answers
// webhook_endpoint_not_found.
func (s *Service) DeleteEndpoint(ctx context.Context, p bokat.Principal, id string) error {
	if !validEndpointID(id) {
		return endpointNotFound()
	}
	err := s.db.InTx(ctx, func(tx Tx) error {
		return tx.DeleteWebhookEndpoint(ctx, p.ClientID, p.UserID, id, s.now())
	})
	if errors.Is(err, bokat.ErrNotFound) {
		return endpointNotFound()
	}
	return err
}

// SetEndpointEnabled enables or disables the principal's endpoint and
// returns it. Disabling cancels its pending deliveries; enabling resumes
// deliveries of events that happen from then on (failed or cancelled ones
// can be replayed). An endpoint that is unknown or not the principal's
// answers webhook_endpoint_not_found.
func (s *Service) SetEndpointEnabled(ctx context.Context, p bokat.Principal, id string, enabled bool) (bokat.WebhookEndpoint, error) {
	if !validEndpointID(id) {
		return bokat.WebhookEndpoint{}, endpointNotFound()
	}
	var row Endpoint
	err := s.db.InTx(ctx, func(tx Tx) error {
		var err error
		row, err = tx.SetWebhookEndpointEnabled(ctx, p.ClientID, p.UserID, id, enabled, "disabled by its owner", s.now())
		return err
	})
	if errors.Is(err, bokat.ErrNotFound) {
		return bokat.WebhookEndpoint{}, endpointNotFound()
	}
	if err != nil {
		return bokat.WebhookEndpoint{}, err
	}
	return endpointOf(row), nil
}

// PreviousSecretLifetime is how long an endpoint's replaced signing secret
// still signs its deliveries after a rotation.
const PreviousSecretLifetime = 24 * time.Hour

// RotateSecret gives the principal's endpoint a fresh signing secret and
// returns the endpoint and the secret, which is never shown again. For
// PreviousSecretLifetime the secret it replaces still signs too (a second
// pair of signatures); rotating again within that time drops the older one
// at once, so at most two secrets sign. An endpoint that is unknown or not
// the principal's answers webhook_endpoint_not_found.
func (s *Service) RotateSecret(ctx context.Context, p bokat.Principal, id string) (bokat.WebhookSecretRotation, error) {
	if !validEndpointID(id) {
		return bokat.WebhookSecretRotation{}, endpointNotFound()
	}
	secret := NewSigningSecret()
	keyID, sealed, err := s.keys.Seal([]byte(secret), secretContext(id))
	if err != nil {
		return bokat.WebhookSecretRotation{}, fmt.Errorf("seal signing secret: %w", err)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	var row Endpoint
	err = s.db.InTx(ctx, func(tx Tx) error {
		var err error
		row, err = tx.RotateWebhookEndpointSecret(ctx, p.ClientID, p.UserID, id, SecretRotation{
			SigningKeyID: newSigningKeyID(), SecretKeyID: keyID, SecretCiphertext: sealed,
			PreviousUntil: now.Add(PreviousSecretLifetime), Now: now,
		})
		return err
	})
	if errors.Is(err, bokat.ErrNotFound) {
		return bokat.WebhookSecretRotation{}, endpointNotFound()
	}
	if err != nil {
		return bokat.WebhookSecretRotation{}, err
	}
	return bokat.WebhookSecretRotation{Endpoint: endpointOf(row), Secret: secret,
		PreviousSecretExpiresAt: row.PreviousSecretExpiresAt}, nil
}

func endpointNotFound() error {
	return &bokat.Error{Code: bokat.CodeWebhookEndpointNotFound,
		Detail: "No webhook endpoint with this id belongs to the caller."}
}

// Replay queues a new delivery event, with a new Webhook-Id, of the
// principal's outbox event to each of the principal's enabled endpoints
// subscribed to its type. An event that is unknown or not the principal's
// answers webhook_event_not_found; when no endpoint subscribes to the type,
// webhook_endpoint_not_found.
func (s *Service) Replay(ctx context.Context, p bokat.Principal, outboxID string) (bokat.WebhookReplay, error) {
	if uuid.Validate(outboxID) != nil {
		return bokat.WebhookReplay{}, eventNotFound()
	}
	var replay bokat.WebhookReplay
	err := s.db.InTx(ctx, func(tx Tx) error {
		ev, err := tx.OwnedOutboxEvent(ctx, p.ClientID, p.UserID, outboxID)
		if errors.Is(err, bokat.ErrNotFound) {
			return eventNotFound()
		}
		if err != nil {
			return err
		}
		eps, err := tx.SubscribedWebhookEndpointIDs(ctx, p.ClientID, p.UserID, ev.EventType)
		if err != nil {
			return err
		}
		if len(eps) == 0 {
			return &bokat.Error{Code: bokat.CodeWebhookEndpointNotFound,
				Detail:       fmt.Sprintf("None of the caller's enabled webhook endpoints subscribes to %s.", ev.EventType),
				SafeNextStep: "Register an endpoint for this event type, then replay again."}
		}
		webhookID, err := uuid.NewV7()
		if err != nil {
			return err
		}
		now := s.now().UTC().Truncate(time.Millisecond)
		for _, endpointID := range eps {
			id, err := uuid.NewV7()
			if err != nil {
				return err
			}
			if _, err := tx.InsertWebhookDelivery(ctx, outbox.Delivery{
				ID: id.String(), WebhookID: webhookID.String(), OutboxID: ev.ID, EndpointID: endpointID,
				Origin: outbox.OriginReplay, NextAttemptAt: now, CreatedAt: now,
			}); err != nil {
				return err
			}
		}
		replay = bokat.WebhookReplay{
			ID: webhookID.String(), OutboxID: ev.ID, BookingID: ev.BookingID, EventType: bokat.EventType(ev.EventType),
			Status: outbox.DeliveryPending, CreatedAt: now,
		}
		return nil
	})
	if err != nil {
		return bokat.WebhookReplay{}, err
	}
	if s.onQueued != nil {
		s.onQueued()
	}
	return replay, nil
}

// Recover queues again, as new deliveries with new Webhook-Ids and in one
// transaction, every event whose delivery to the principal's endpoint
// failed (attempts exhausted) since the given time, and returns how many it
// queued. An event already delivered or pending again to the endpoint is
// skipped, so recovering twice queues nothing twice. An endpoint that is
// unknown or not the principal's answers webhook_endpoint_not_found; a
// disabled one, webhook_endpoint_disabled.
func (s *Service) Recover(ctx context.Context, p bokat.Principal, id string, since time.Time) (int, error) {
	if !validEndpointID(id) {
		return 0, endpointNotFound()
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	if since.After(now) {
		return 0, &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "since must not be in the future.",
			Issues: []string{"since: must not be in the future"}}
	}
	var n int
	err := s.db.InTx(ctx, func(tx Tx) error {
		n = 0
		ep, err := tx.LockOwnedWebhookEndpoint(ctx, p.ClientID, p.UserID, id)
		if errors.Is(err, bokat.ErrNotFound) {
			return endpointNotFound()
		}
		if err != nil {
			return err
		}
		if !ep.DisabledAt.IsZero() {
			return &bokat.Error{Code: bokat.CodeWebhookEndpointDisabled,
				Detail:       "The webhook endpoint is disabled; nothing can be queued to it.",
				SafeNextStep: "Enable the endpoint (POST /v1/webhook-endpoints/{id}/enable), then recover again."}
		}
		ids, err := tx.FailedWebhookOutboxIDs(ctx, id, since)
		if err != nil {
			return err
		}
		for _, outboxID := range ids {
			deliveryID, err := uuid.NewV7()
			if err != nil {
				return err
			}
			webhookID, err := uuid.NewV7()
			if err != nil {
				return err
			}
			if _, err := tx.InsertWebhookDelivery(ctx, outbox.Delivery{
				ID: deliveryID.String(), WebhookID: webhookID.String(), OutboxID: outboxID, EndpointID: id,
				Origin: outbox.OriginReplay, NextAttemptAt: now, CreatedAt: now,
			}); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if n > 0 && s.onQueued != nil {
		s.onQueued()
	}
	return n, nil
}

func eventNotFound() error {
	return &bokat.Error{Code: bokat.CodeWebhookEventNotFound,
		Detail: "No webhook event (outbox item) with this id belongs to the caller."}
}
