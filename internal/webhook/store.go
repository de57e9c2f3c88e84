package webhook

import (
	"context"
	"errors"
	"time"

	"bokat"
	"bokat/internal/outbox"
)

// Tx is a write transaction as the Service uses it. Methods that look an
// endpoint up through its owner return bokat.ErrNotFound when the owner has
// no such endpoint (unknown, another owner's, or deleted).
type Tx interface {
	// InsertWebhookEndpoint stores a new endpoint unless its owner already
	// has limit endpoints, in which case it returns ErrEndpointLimit.
	InsertWebhookEndpoint(ctx context.Context, e Endpoint, limit int) error
	// DeleteWebhookEndpoint deletes the owner's endpoint and cancels its
	// pending deliveries.
	DeleteWebhookEndpoint(ctx context.Context, clientID, userID, id string, now time.Time) error
	// SetWebhookEndpointEnabled enables or disables the owner's endpoint
	// and returns it; disabling records reason and cancels its pending
	// deliveries.
	SetWebhookEndpointEnabled(ctx context.Context, clientID, userID, id string, enabled bool, reason string, now time.Time) (Endpoint, error)
	// RotateWebhookEndpointSecret gives the owner's endpoint the new
	// secret, keeping the one it replaces until r.PreviousUntil.
	RotateWebhookEndpointSecret(ctx context.Context, clientID, userID, id string, r SecretRotation) (Endpoint, error)
	// LockOwnedWebhookEndpoint returns the owner's endpoint, holding it
	// until the transaction ends.
	LockOwnedWebhookEndpoint(ctx context.Context, clientID, userID, id string) (Endpoint, error)
	// OwnedOutboxEvent returns the outbox event with the id when it belongs
	// to the owner, or bokat.ErrNotFound.
	OwnedOutboxEvent(ctx context.Context, clientID, userID, id string) (outbox.Event, error)
	// SubscribedWebhookEndpointIDs returns the ids of the owner's enabled
	// endpoints subscribed to the event type, oldest first.
	SubscribedWebhookEndpointIDs(ctx context.Context, clientID, userID, eventType string) ([]string, error)
	// FailedWebhookOutboxIDs returns, oldest first and each once, the
	// outbox events with a failed delivery to the endpoint created at or
	// after since and no delivery to it that is pending or delivered.
	FailedWebhookOutboxIDs(ctx context.Context, endpointID string, since time.Time) ([]string, error)
	// InsertWebhookDelivery writes a pending delivery.
	InsertWebhookDelivery(ctx context.Context, d outbox.Delivery) (bool, error)
}

// Store is the database as the Service uses it.
type Store interface {
	// WebhookEndpoints returns the owner's endpoints that are not deleted,
	// oldest first.
	WebhookEndpoints(ctx context.Context, clientID, userID string) ([]Endpoint, error)
	// EndpointAttempts returns up to limit attempts of deliveries to the
	// owner's endpoint, newest first, strictly after the position after,
	// or bokat.ErrNotFound when the owner has no such endpoint.
	EndpointAttempts(ctx context.Context, clientID, userID, endpointID string, after AttemptPosition, limit int) ([]EndpointAttempt, error)
	// InTx runs fn in one write transaction.
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Endpoint is a stored webhook endpoint. The signing secret is kept only
// sealed: SecretKeyID names the server key that sealed it and
// SecretCiphertext holds the sealed bytes.
type Endpoint struct {
	ID            string
	OwnerClientID string
	OwnerUserID   string
	// Mode is the realm of the endpoint: its owner's (empty: live). A
	// delivery takes its endpoint's.
	Mode             bokat.Mode
	URL              string
	EventTypes       []string
	SigningKeyID     string
	SecretKeyID      string
	SecretCiphertext string
	// DisabledAt is zero while the endpoint is enabled.
	DisabledAt     time.Time
	DisabledReason string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// PreviousSecretExpiresAt is zero when the endpoint keeps no previous
	// secret; otherwise the secret it replaced last still signs until then.
	PreviousSecretExpiresAt time.Time
}

// ErrEndpointLimit is returned when an owner already has the most
// endpoints allowed.
var ErrEndpointLimit = errors.New("webhook endpoint limit reached")

// SecretRotation is a new signing secret, sealed, for an endpoint.
type SecretRotation struct {
	SigningKeyID     string
	SecretKeyID      string
	SecretCiphertext string
	// PreviousUntil is until when the replaced secret still signs.
	PreviousUntil time.Time
	Now           time.Time
}

// EndpointAttempt is one recorded attempt of a delivery to an endpoint,
// with the delivery's event.
type EndpointAttempt struct {
	outbox.RecordedAttempt
	WebhookID string
	OutboxID  string
	EventType string
}

// AttemptPosition is where a page of an endpoint's attempts ends: the
// (attempted_at, delivery id, attempt) of its last row. The zero value
// starts at the newest attempt.
type AttemptPosition struct {
	AttemptedAt time.Time
	DeliveryID  string
	Attempt     int
}
