package outbox

import (
	"context"
	"time"

	"bokat"
)

// Tx is a write transaction as the Relay uses it.
type Tx interface {
	// ClaimUnrelayedOutboxEvents returns up to limit events not relayed
	// yet, oldest first, held against other relays until the transaction
	// ends.
	ClaimUnrelayedOutboxEvents(ctx context.Context, limit int) ([]Event, error)
	// SubscribedWebhookEndpointIDs returns the ids of the owner's enabled
	// endpoints subscribed to the event type, oldest first.
	SubscribedWebhookEndpointIDs(ctx context.Context, clientID, userID, eventType string) ([]string, error)
	// InsertWebhookDelivery writes a pending delivery; it reports false,
	// writing nothing, when the delivery of that event to that endpoint
	// already exists.
	InsertWebhookDelivery(ctx context.Context, d Delivery) (bool, error)
	MarkOutboxEventRelayed(ctx context.Context, id string, now time.Time) error
}

// DeliveryStore is the database as the Dispatcher uses it: due deliveries
// claimed under a lease, and their attempts recorded.
type DeliveryStore interface {
	// ClaimWebhookDeliveries claims up to limit due deliveries not held
	// under another worker's lease, stamping them with token until
	// now+lease.
	ClaimWebhookDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, token string) ([]ClaimedDelivery, error)
	// RecordWebhookAttempt stores the attempt and applies its outcome,
	// returning the attempt's number (1 for the first).
	RecordWebhookAttempt(ctx context.Context, a Attempt) (int, error)
	// CancelWebhookDelivery cancels a claimed delivery without an attempt.
	CancelWebhookDelivery(ctx context.Context, id, leaseToken, reason string, now time.Time) error
}

// Store is the database as this package uses it.
type Store interface {
	DeliveryStore
	// HasUnrelayedOutboxEvents reports, without taking the writer, whether
	// any event awaits the relay.
	HasUnrelayedOutboxEvents(ctx context.Context) (bool, error)
	// InTx runs fn in one write transaction.
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Event is one booking lifecycle event, written in the same transaction as
// the change it reports. Payload is the event's `data` object as JSON: the
// redacted booking and the request id, never customer contact data.
type Event struct {
	ID            string
	OwnerClientID string
	OwnerUserID   string
	BookingID     string
	EventType     string
	Payload       []byte
	OccurredAt    time.Time
	CreatedAt     time.Time
	// Mode is the realm of the event: its booking's (empty: live).
	Mode bokat.Mode
}

// Webhook delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	// DeliveryCancelled: the endpoint was deleted or disabled before the
	// delivery succeeded.
	DeliveryCancelled = "cancelled"
)

// Origins of a webhook delivery.
const (
	OriginRelay  = "relay"
	OriginReplay = "replay"
)

// Delivery is one delivery event to one endpoint, retried until it
// succeeds or its attempts run out.
type Delivery struct {
	ID string
	// WebhookID is the Webhook-Id header and body id: shared by the
	// endpoints of one delivery event, kept by retries, new on replay.
	WebhookID      string
	OutboxID       string
	EndpointID     string
	Origin         string // OriginRelay or OriginReplay
	Status         string // Delivery*
	Attempts       int
	NextAttemptAt  time.Time
	LastStatusCode int // 0: none
	LastError      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	FinishedAt     time.Time
}

// ClaimedDelivery is a due delivery a worker holds under a lease, with what
// sending it needs.
type ClaimedDelivery struct {
	// Mode is the delivery's realm: test deliveries are made like live
	// ones but never counted in the live metrics.
	Mode       bokat.Mode
	ID         string
	WebhookID  string
	OutboxID   string
	EndpointID string
	// Attempts is the number of attempts made before this claim.
	Attempts   int
	CreatedAt  time.Time
	LeaseToken string

	URL              string
	SecretKeyID      string
	SecretCiphertext string
	// PreviousSecretKeyID and PreviousSecretCiphertext hold the endpoint's
	// previous secret, sealed, while it still signs at the claim's time;
	// both are empty otherwise.
	PreviousSecretKeyID      string
	PreviousSecretCiphertext string
	// EndpointActive is false when the endpoint was deleted or disabled.
	EndpointActive bool

	EventType  string
	BookingID  string
	Payload    []byte
	OccurredAt time.Time
}

// Attempt is the outcome of one delivery attempt and what it does to the
// delivery.
type Attempt struct {
	DeliveryID string
	// LeaseToken is the claim the attempt was made under.
	LeaseToken  string
	AttemptedAt time.Time
	// StatusCode is the HTTP status received; 0 when no response arrived.
	StatusCode int
	Latency    time.Duration
	// Error describes a failure; it must hold no secret.
	Error string
	// Status is the delivery's new status: DeliveryDelivered,
	// DeliveryPending (retry at NextAttemptAt) or DeliveryFailed.
	Status        string
	NextAttemptAt time.Time
	// DisableEndpoint, when not empty, disables the delivery's endpoint with
	// this reason and cancels its other pending deliveries.
	DisableEndpoint string
	// Now is when the attempt is recorded.
	Now time.Time
}

// RecordedAttempt is one recorded attempt of a delivery.
type RecordedAttempt struct {
	DeliveryID  string
	Attempt     int
	AttemptedAt time.Time
	StatusCode  int // 0: no response
	Latency     time.Duration
	Error       string
}
