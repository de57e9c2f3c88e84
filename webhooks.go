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

// WebhookAttempt is one attempt of a delivery to an endpoint.
type WebhookAttempt struct {
	// WebhookID is the delivery's Webhook-Id.
	WebhookID   string
	OutboxID    string
	EventType   EventType
	Attempt     int
	AttemptedAt time.Time
	// StatusCode is the HTTP status answered; 0 when none arrived.
	StatusCode int
	// ErrorClass is empty for a 2xx answer, else one of WebhookError*.
	ErrorClass string
	Latency    time.Duration
}

// Error classes of a failed webhook attempt.
const (
	WebhookErrorHTTPStatus = "http_status" // a non-2xx answer (redirects included)
	WebhookErrorTimeout    = "timeout"     // no answer in time
	WebhookErrorRefused    = "refused"     // destination refused by the guard at dial time
	WebhookErrorNetwork    = "network"     // connection, TLS or other transport failure
	WebhookErrorInternal   = "internal"    // not sent: a fault on our side
)

// WebhookAttemptPage is a page of an endpoint's attempts, newest first.
type WebhookAttemptPage struct {
	Attempts []WebhookAttempt
	// NextCursor continues after the page; empty on the last page.
	NextCursor string
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
