package bokat

import "time"

// WebhookEndpoint is a registered webhook destination as its owner sees it.
// The signing secret is never part of it: it is shown once, at registration.
type WebhookEndpoint struct {
	ID         string
	URL        string
	EventTypes []EventType
	// SigningKeyID identifies the version of the endpoint's signing secret.
	SigningKeyID string
	// Enabled is false once the endpoint answered 410 Gone.
	Enabled   bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// WebhookSecretRotation is the outcome of rotating an endpoint's signing
// secret.
type WebhookSecretRotation struct {
	Endpoint WebhookEndpoint
	// Secret is the new signing secret, shown to the owner once.
	Secret string
	// PreviousSecretExpiresAt is until when the replaced secret still signs.
	PreviousSecretExpiresAt time.Time
}

// WebhookReplay is a new delivery event queued for an existing outbox event.
type WebhookReplay struct {
	// ID is the new delivery event's Webhook-Id.
	ID        string
	OutboxID  string
	BookingID string
	EventType EventType
	// Status is "pending" when queued.
	Status    string
	CreatedAt time.Time
}
