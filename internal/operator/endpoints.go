package operator

import (
	"context"
	"time"
)

// Endpoint is a webhook endpoint that fails: disabled, or with deliveries
// failed or being retried.
type Endpoint struct {
	ID                         string
	OwnerClientID, OwnerUserID string
	// Host is the receiver's host (the address's path and query may carry
	// a partner's secret; they are not shown).
	Host           string
	Mode           string
	DisabledAt     time.Time
	DisabledReason string
	// Failed counts deliveries that failed for good since the instant
	// asked for; Retrying those pending after a failed attempt.
	Failed, Retrying int
	LastStatusCode   int
	LastError        string
	LastFailureAt    time.Time
}

// EndpointWindow is how far back failed deliveries are counted.
const EndpointWindow = 7 * 24 * time.Hour

// FailingEndpoints returns the webhook endpoints that are disabled or
// whose deliveries failed in EndpointWindow or are being retried.
func (s *Service) FailingEndpoints(ctx context.Context) ([]Endpoint, error) {
	return s.store.FailingEndpoints(ctx, s.now().Add(-EndpointWindow))
}

// Credential is a partner credential or an OAuth client as the console
// lists it; never a secret or its hash.
type Credential struct {
	// Kind is "partner" or "oauth".
	Kind, ID, Name string
	Scopes         string
	Mode           string
	// Registration is how an OAuth client came to be: "operator",
	// "dynamic" or "metadata".
	Registration string
	CreatedAt    time.Time
	RevokedAt    time.Time
}

// Credentials returns the partner credentials and the OAuth clients.
func (s *Service) Credentials(ctx context.Context) ([]Credential, error) {
	return s.store.Credentials(ctx)
}
