package auth

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// UsageInterval is the resolution of a credential's last-used time: a use
// writes it only when the time recorded before is at least this old.
const UsageInterval = time.Minute

// CredentialKind names the kind of credential whose use is recorded.
type CredentialKind string

// The credentials whose last use is recorded.
const (
	// UsePartner is a partner credential used with its current token.
	UsePartner CredentialKind = "partner"
	// UsePartnerPrevious is a partner credential used with the token a
	// rotation replaced, during the overlap.
	UsePartnerPrevious CredentialKind = "partner_previous"
	// UseProviderToken is a provider API token.
	UseProviderToken CredentialKind = "provider_token"
	// UseOAuthClient is an OAuth client: its access token was presented,
	// or it called the token endpoint.
	UseOAuthClient CredentialKind = "oauth_client"
)

// UsageStore is what recording last use needs of the database.
type UsageStore interface {
	// RecordCredentialUse sets the credential's last-used time to at
	// unless the stored one is later than at minus UsageInterval (then it
	// changes nothing). An unknown credential is no error.
	RecordCredentialUse(ctx context.Context, kind CredentialKind, id string, at time.Time) error
}

// maxUsageEntries is how many credentials the recorder remembers before it
// forgets those whose last write is older than UsageInterval.
const maxUsageEntries = 4096

// Usage records when credentials were last used without a write per
// request: each process writes a credential's time at most once per
// UsageInterval (it remembers when it last wrote), and the store's
// statement changes no row when another process wrote less than
// UsageInterval before. So the writes are bounded by the credentials in
// use, not by the requests: at most one per credential, process and
// minute. A failed write is logged and never fails the request.
type Usage struct {
	store UsageStore
	log   *slog.Logger

	mu   sync.Mutex
	last map[usageKey]time.Time
	// pruned is when the map was last swept of old entries.
	pruned time.Time
	// writes counts the store calls made (for tests and figures).
	writes atomic.Int64
}

type usageKey struct {
	kind CredentialKind
	id   string
}

// NewUsage returns a recorder writing to store; log (optional) receives
// failed writes.
func NewUsage(store UsageStore, log *slog.Logger) *Usage {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Usage{store: store, log: log, last: map[usageKey]time.Time{}}
}

// Record notes that the credential was used at now, writing it to the
// store when this process has not written it in the last UsageInterval.
// A nil recorder records nothing.
func (u *Usage) Record(ctx context.Context, kind CredentialKind, id string, now time.Time) {
	if u == nil || id == "" {
		return
	}
	k := usageKey{kind, id}
	u.mu.Lock()
	if last, ok := u.last[k]; ok && now.Sub(last) < UsageInterval {
		u.mu.Unlock()
		return
	}
	if len(u.last) >= maxUsageEntries && now.Sub(u.pruned) >= UsageInterval {
		u.pruned = now
		for key, t := range u.last {
			if now.Sub(t) >= UsageInterval {
				delete(u.last, key)
			}
		}
	}
	u.last[k] = now
	u.mu.Unlock()
	u.writes.Add(1)
	if err := u.store.RecordCredentialUse(ctx, kind, id, now); err != nil && ctx.Err() == nil {
		u.log.WarnContext(ctx, "recording a credential's last use failed", "credential_kind", string(kind),
			"credential_id", id, "error", err.Error())
	}
}

// Writes returns how many writes the recorder has made.
func (u *Usage) Writes() int64 { return u.writes.Load() }
