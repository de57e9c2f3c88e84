package followup

import (
	"context"
	"time"

	"bokat"
	"bokat/internal/idem"
)

// Store is what the follow-up service needs of the database.
type Store interface {
	// InIdempotentTx runs fn in one write transaction guarded by the key
	// (see package idem): a replay returns the stored outcome.
	InIdempotentTx(ctx context.Context, k idem.Key, fingerprint string, now, expiresAt time.Time,
		fn func(Tx) (idem.Outcome, error)) (idem.Outcome, bool, error)
	FollowUpRequest(ctx context.Context, id string) (Record, error)
	ProviderCandidates(ctx context.Context, mode bokat.Mode, serviceIDs []string, directServiceID string, postcode int) ([]ProviderMatch, error)
	ProviderContact(ctx context.Context, providerID string) (bokat.ProviderContact, error)
}

// Tx is what creating a request writes in its transaction.
type Tx interface {
	InsertFollowUpRequest(ctx context.Context, r Record) error
	InsertNotificationJob(ctx context.Context, j bokat.NotificationJob) error
	// EngineName is the database engine the request is stored on
	// ("sqlite" or "postgres"), reported as the request's backend.
	EngineName() string
}

// Record is a stored provider follow-up request. CustomerJSON holds
// the customer's contact data: it is never returned by the API or logged.
// CustomerJSON, LocationJSON, Description and ConsentStatement are sealed at
// rest by the store; this struct holds them in plain text.
type Record struct {
	ID            string
	SessionID     string
	OwnerClientID string
	OwnerUserID   string
	// Mode is the realm of the request: its owner's (empty: live).
	Mode               bokat.Mode
	VerticalID         string
	JobTypeID          string
	Status             string
	Description        string
	CustomerJSON       []byte
	LocationJSON       []byte
	Postcode           string
	TimingJSON         []byte
	DetailsJSON        []byte
	BudgetSEK          *int64
	CustomerNextStep   string
	Source             string
	ExternalReference  string
	Locale             string
	Timezone           string
	ConsentStatement   string
	ConsentSource      string
	ConsentCollectedAt time.Time
	Candidates         []RecordCandidate
	CreatedAt          time.Time
}

// RecordCandidate is a provider a stored request is handed to.
type RecordCandidate struct {
	ProviderID    string
	DirectBooking bool
	// NotificationStatus is how sending the request to the provider went:
	// bokat.NotificationPending, Sent, Skipped or Failed.
	// InsertFollowUpRequest ignores it: new candidates are pending.
	NotificationStatus string
}

// ProviderMatch is a provider that can receive a follow-up request.
type ProviderMatch struct {
	ID   string
	Name string
	// DirectBooking: the provider owns a price for the direct service.
	DirectBooking bool
}
