package supply

import (
	"context"
	"time"

	"bokat"
)

// Store is the database as an import sees it: one write transaction per
// import.
type Store interface {
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Tx is the write transaction an import runs in.
type Tx interface {
	// PutSupply makes the stored supply of each provider equal the one
	// given, writing only what differs, and says per provider, in the order
	// given, what that changed. A provider id given twice is an error.
	PutSupply(ctx context.Context, ps []bokat.ProviderSupply, now time.Time) ([]Outcome, error)
	// ManagedGroups returns, for those of the providers that manage some
	// field groups themselves, the groups (GroupHours, ...) they manage.
	ManagedGroups(ctx context.Context, providerIDs []string) (map[string][]string, error)
	// AuditImport records, in the provider audit of each provider given, that
	// the operator's import of the file changed it (note says what was
	// kept).
	AuditImport(ctx context.Context, providerIDs []string, file string, notes map[string]string, now time.Time) error
	// ProviderSupply reads one provider with its postcodes, services,
	// hours and active blocked periods, or returns bokat.ErrNotFound.
	ProviderSupply(ctx context.Context, providerID string) (bokat.ProviderSupply, error)
}

// Outcome says what importing one provider changed.
type Outcome string

// Import outcomes.
const (
	Created   Outcome = "created"
	Updated   Outcome = "updated"
	Unchanged Outcome = "unchanged"
)
