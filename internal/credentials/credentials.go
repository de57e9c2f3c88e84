// Package credentials is the credential lifecycle operators run, from the
// command line (bokat partner …, bokat oauth-client …) and from the
// operator console: creating, listing, rotating and revoking partner
// credentials, listing and revoking OAuth clients, and purging dynamically
// registered clients nobody uses. Every action writes an operator audit
// record in its own transaction (AppendAudit), which the console shows.
//
// Tokens and secrets are shown once, by the action that makes them, and
// stored only as keyed hashes; nothing this package lists holds one.
package credentials

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/oauth"
)

// MaxOverlap is the longest a replaced partner token may keep working
// after a rotation.
const MaxOverlap = 30 * 24 * time.Hour

// DefaultOverlap is the overlap of `bokat partner rotate` without
// --overlap.
const DefaultOverlap = 24 * time.Hour

// MinUnusedFor is the shortest idle time after which dynamically
// registered clients may be purged (a guard against `--unused-for 0`).
const MinUnusedFor = 24 * time.Hour

// Audit actions and object kinds written by this package.
const (
	ActionPartnerCreated       = "partner.created"
	ActionPartnerRotated       = "partner.rotated"
	ActionPartnerRevoked       = "partner.revoked"
	ActionOAuthClientCreated   = "oauth_client.created"
	ActionOAuthClientRevoked   = "oauth_client.revoked"
	ActionOAuthClientPurged    = "oauth_client.purged"
	ActionProviderTokenRevoked = "provider_token.revoked"

	KindPartner       = "partner"
	KindOAuthClient   = "oauth_client"
	KindProviderToken = "provider_token"
)

// PurgeJobActor is the actor of serve's periodic purge of dynamic clients.
const PurgeJobActor = "job:purge-dynamic-clients"

// CLIActor is the audit actor of a command run by the operating-system
// user: "cli:<user>".
func CLIActor(osUser string) string {
	osUser = strings.TrimSpace(osUser)
	if osUser == "" {
		osUser = "unknown"
	}
	return "cli:" + osUser
}

// Service runs the lifecycle on a store.
type Service struct {
	store  Store
	hasher *auth.Hasher
	now    func() time.Time
}

// New returns the lifecycle on store, hashing tokens with hasher, on the
// clock now (time.Now when nil).
func New(store Store, hasher *auth.Hasher, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, hasher: hasher, now: now}
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }

func notFound(kind, id string) error {
	return bokat.Errorf(bokat.CodeNotFound, "no %s %s", strings.ReplaceAll(kind, "_", " "), id)
}

// Partners returns every partner credential, revoked ones included.
func (s *Service) Partners(ctx context.Context) ([]Partner, error) {
	return s.store.PartnerCredentials(ctx)
}

// CreatePartner creates a partner credential of the realm mode with the
// scopes and returns it with its token, shown this once.
func (s *Service) CreatePartner(ctx context.Context, actor string, mode bokat.Mode, name string, scopes []bokat.Scope) (Partner, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 120 || bokat.CheckText(name, false) != "" {
		return Partner{}, "", bokat.Errorf(bokat.CodeValidationFailed, "the partner name must be 1 to 120 characters of text")
	}
	if len(scopes) == 0 {
		return Partner{}, "", bokat.Errorf(bokat.CodeValidationFailed, "at least one scope is required")
	}
	u, err := uuid.NewV7()
	if err != nil {
		return Partner{}, "", err
	}
	now := s.now()
	p := Partner{ID: bokat.PartnerClientIDPrefix + strings.ReplaceAll(u.String(), "-", ""), Name: name, Mode: mode.Or(),
		Scopes: scopes, CreatedAt: now}
	token := auth.NewPartnerToken(mode)
	err = s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertPartnerClient(ctx, p, s.hasher.HashPartnerToken(token)); err != nil {
			return err
		}
		return AppendAudit(ctx, tx, AuditRecord{At: now, Actor: actor, Action: ActionPartnerCreated, ObjectKind: KindPartner,
			ObjectID: p.ID, Details: map[string]string{"name": name, "mode": string(p.Mode), "scopes": joinScopes(scopes)}})
	})
	if err != nil {
		return Partner{}, "", err
	}
	return p, token, nil
}

// Rotation is the outcome of a rotation.
type Rotation struct {
	Partner Partner
	// Token is the new token, shown this once.
	Token string
	// PreviousValidUntil is when the replaced token stops working (zero:
	// it stopped at once).
	PreviousValidUntil time.Time
	// EndedEarlier reports that a token replaced by an earlier rotation,
	// still within its overlap, stopped working now.
	EndedEarlier bool
}

// RotatePartner gives the partner credential a new token. The token it
// replaces keeps working for overlap (0 to MaxOverlap; 0: it stops now);
// a token an earlier rotation replaced stops now, so at most two tokens
// of a credential work at any time.
func (s *Service) RotatePartner(ctx context.Context, actor, id string, overlap time.Duration) (Rotation, error) {
	return s.rotatePartner(ctx, actor, id, overlap, nil)
}

// RotatePartnerSeen rotates as RotatePartner does, only if the credential
// was last rotated at seen (zero: never), as the form that asks for the
// rotation showed it; else it changes nothing and answers bokat.ErrConflict.
// A form sent twice (a reload of its answer) thus rotates once, and its
// second answer has no token to show.
func (s *Service) RotatePartnerSeen(ctx context.Context, actor, id string, overlap time.Duration, seen time.Time) (Rotation, error) {
	return s.rotatePartner(ctx, actor, id, overlap, &seen)
}

func (s *Service) rotatePartner(ctx context.Context, actor, id string, overlap time.Duration, seen *time.Time) (Rotation, error) {
	if overlap < 0 || overlap > MaxOverlap {
		return Rotation{}, bokat.Errorf(bokat.CodeValidationFailed, "the overlap must be from 0 to %s", formatDuration(MaxOverlap))
	}
	now := s.now()
	var out Rotation
	err := s.store.InTx(ctx, func(tx Tx) error {
		p, err := tx.PartnerCredential(ctx, id)
		if errors.Is(err, bokat.ErrNotFound) {
			return notFound(KindPartner, id)
		}
		if err != nil {
			return err
		}
		if !p.RevokedAt.IsZero() {
			return bokat.Errorf(bokat.CodeValidationFailed, "partner %s was revoked at %s; create a new credential instead",
				id, p.RevokedAt.Format(time.RFC3339))
		}
		if seen != nil && !sameMilli(*seen, p.RotatedAt) {
			return fmt.Errorf("%w: partner %s was rotated since", bokat.ErrConflict, id)
		}
		out.EndedEarlier = now.Before(p.PreviousValidUntil)
		out.Token = auth.NewPartnerToken(p.Mode)
		if overlap > 0 {
			out.PreviousValidUntil = now.Add(overlap)
		}
		if err := tx.RotatePartnerToken(ctx, id, s.hasher.HashPartnerToken(out.Token), out.PreviousValidUntil, now); err != nil {
			return err
		}
		details := map[string]string{"overlap": formatDuration(overlap)}
		if overlap > 0 {
			details["previous_token_valid_until"] = out.PreviousValidUntil.Format(time.RFC3339)
		}
		if out.EndedEarlier {
			details["earlier_previous_token_ended"] = "true"
		}
		if err := AppendAudit(ctx, tx, AuditRecord{At: now, Actor: actor, Action: ActionPartnerRotated, ObjectKind: KindPartner,
			ObjectID: id, Details: details}); err != nil {
			return err
		}
		out.Partner, err = tx.PartnerCredential(ctx, id)
		return err
	})
	if err != nil {
		return Rotation{}, err
	}
	return out, nil
}

// RevokePartner revokes the partner credential at once: every token of it
// (a rotation's replaced one too) is refused from the next request on.
func (s *Service) RevokePartner(ctx context.Context, actor, id string) (Partner, error) {
	return revoke(ctx, s, actor, id, revocation[Partner]{kind: KindPartner, label: "partner", action: ActionPartnerRevoked,
		read: Tx.PartnerCredential, revokedAt: func(p Partner) time.Time { return p.RevokedAt },
		revoke: func(ctx context.Context, tx Tx, id string, p Partner, now time.Time) (map[string]string, error) {
			return map[string]string{"name": p.Name}, tx.RevokePartner(ctx, id, now)
		}})
}

// revocation is what revoking one kind of credential C takes: its audit
// kind and action, its label in errors, how a transaction reads it and
// when it was revoked, and its revocation in a transaction, which returns
// the audit record's details.
type revocation[C any] struct {
	kind, label, action string
	read                func(tx Tx, ctx context.Context, id string) (C, error)
	revokedAt           func(C) time.Time
	revoke              func(ctx context.Context, tx Tx, id string, c C, now time.Time) (map[string]string, error)
}

// revoke revokes the credential of kind k with the id, with its audit
// record, in one transaction, and returns it as revoked. An unknown id is
// bokat.CodeNotFound, one already revoked bokat.CodeValidationFailed.
func revoke[C any](ctx context.Context, s *Service, actor, id string, k revocation[C]) (C, error) {
	now := s.now()
	var out C
	err := s.store.InTx(ctx, func(tx Tx) error {
		c, err := k.read(tx, ctx, id)
		if errors.Is(err, bokat.ErrNotFound) {
			return notFound(k.kind, id)
		}
		if err != nil {
			return err
		}
		if at := k.revokedAt(c); !at.IsZero() {
			return bokat.Errorf(bokat.CodeValidationFailed, "%s %s was already revoked at %s", k.label, id, at.Format(time.RFC3339))
		}
		details, err := k.revoke(ctx, tx, id, c, now)
		if err != nil {
			return err
		}
		if err := AppendAudit(ctx, tx, AuditRecord{At: now, Actor: actor, Action: k.action, ObjectKind: k.kind,
			ObjectID: id, Details: details}); err != nil {
			return err
		}
		out, err = k.read(tx, ctx, id)
		return err
	})
	return out, err
}

// OAuthClients returns every OAuth client, revoked ones included.
func (s *Service) OAuthClients(ctx context.Context) ([]OAuthClient, error) {
	return s.store.OAuthClientCredentials(ctx)
}

// CreateOAuthClient registers an OAuth client as `bokat oauth-client
// create` does (oauth.CreateClient's rules) and returns its id and, for a
// confidential client, its secret, shown this once.
func (s *Service) CreateOAuthClient(ctx context.Context, actor string, spec oauth.ClientSpec) (id, secret string, err error) {
	now := s.now()
	err = s.store.InTx(ctx, func(tx Tx) error {
		id, secret, err = oauth.CreateClient(ctx, tx, s.hasher, spec, now)
		if err != nil {
			return err
		}
		kind := "confidential"
		if spec.Public {
			kind = "public"
		}
		return AppendAudit(ctx, tx, AuditRecord{At: now, Actor: actor, Action: ActionOAuthClientCreated, ObjectKind: KindOAuthClient,
			ObjectID: id, Details: map[string]string{"name": strings.TrimSpace(spec.Name), "mode": string(spec.Mode.Or()),
				"client_type": kind, "scopes": joinScopes(spec.Scopes)}})
	})
	if err != nil {
		return "", "", err
	}
	return id, secret, nil
}

// RevokeOAuthClient revokes the client with every grant and token issued
// to it: its access tokens are refused from the next request on, its
// refresh tokens and its client authentication at once.
func (s *Service) RevokeOAuthClient(ctx context.Context, actor, id string) (OAuthClient, error) {
	return revoke(ctx, s, actor, id, revocation[OAuthClient]{kind: KindOAuthClient, label: "OAuth client", action: ActionOAuthClientRevoked,
		read: Tx.OAuthClientCredential, revokedAt: func(c OAuthClient) time.Time { return c.RevokedAt },
		revoke: func(ctx context.Context, tx Tx, id string, c OAuthClient, now time.Time) (map[string]string, error) {
			grants, err := tx.RevokeOAuthClient(ctx, id, now)
			return map[string]string{"name": c.Name, "registration": c.Registration, "grants_revoked": fmt.Sprint(grants)}, err
		}})
}

// purgeBatch is how many clients one purge transaction deletes.
const purgeBatch = 200

// PurgeDynamicClients deletes the dynamically registered OAuth clients
// (RFC 7591, /oauth/register) unused for at least unusedFor (never used:
// since registration) that hold no valid token, with their grants and
// tokens, and returns their ids. Clients registered by an operator or
// named by a Client ID Metadata Document are never purged. Each batch of
// up to 200 is one transaction, with one audit record per client.
func (s *Service) PurgeDynamicClients(ctx context.Context, actor string, unusedFor time.Duration) ([]string, error) {
	if unusedFor < MinUnusedFor {
		return nil, bokat.Errorf(bokat.CodeValidationFailed, "unused-for must be at least %s", formatDuration(MinUnusedFor))
	}
	var purged []string
	for {
		now := s.now()
		var batch []string
		err := s.store.InTx(ctx, func(tx Tx) error {
			ids, err := tx.PurgeableDynamicClients(ctx, now.Add(-unusedFor), now, purgeBatch)
			if err != nil {
				return err
			}
			for _, id := range ids {
				c, err := tx.OAuthClientCredential(ctx, id)
				if err != nil {
					return err
				}
				if err := tx.DeleteOAuthClient(ctx, id); err != nil {
					return err
				}
				last := "never"
				if !c.LastUsedAt.IsZero() {
					last = c.LastUsedAt.Format(time.RFC3339)
				}
				if err := AppendAudit(ctx, tx, AuditRecord{At: now, Actor: actor, Action: ActionOAuthClientPurged,
					ObjectKind: KindOAuthClient, ObjectID: id, Details: map[string]string{"name": c.Name,
						"created_at": c.CreatedAt.Format(time.RFC3339), "last_used_at": last,
						"unused_for": formatDuration(unusedFor)}}); err != nil {
					return err
				}
			}
			batch = ids
			return nil
		})
		if err != nil {
			return purged, err
		}
		purged = append(purged, batch...)
		if len(batch) < purgeBatch {
			return purged, nil
		}
	}
}

// ProviderTokens returns the provider's API tokens, revoked ones included.
func (s *Service) ProviderTokens(ctx context.Context, providerID string) ([]ProviderToken, error) {
	return s.store.ProviderTokens(ctx, providerID)
}

// RevokeProviderToken revokes a provider API token at once: the next
// request with it is refused.
func (s *Service) RevokeProviderToken(ctx context.Context, actor, id string) (ProviderToken, error) {
	return revoke(ctx, s, actor, id, revocation[ProviderToken]{kind: KindProviderToken, label: "provider token", action: ActionProviderTokenRevoked,
		read: Tx.ProviderTokenCredential, revokedAt: func(t ProviderToken) time.Time { return t.RevokedAt },
		revoke: func(ctx context.Context, tx Tx, id string, t ProviderToken, now time.Time) (map[string]string, error) {
			return map[string]string{"provider_id": t.ProviderID, "name": t.Name}, tx.RevokeProviderToken(ctx, id, now)
		}})
}

// Audit returns operator audit records, newest first.
func (s *Service) Audit(ctx context.Context, q AuditQuery) ([]AuditRecord, error) {
	if (q.ObjectKind == "") != (q.ObjectID == "") {
		return nil, bokat.Errorf(bokat.CodeValidationFailed, "name both the object kind and its id, or neither")
	}
	switch {
	case q.Limit <= 0:
		q.Limit = 100
	case q.Limit > 1000:
		q.Limit = 1000
	}
	return s.store.OperatorAudit(ctx, q)
}

// AppendAudit validates r and appends it to the operator audit within tx,
// the transaction of the action it records (so the record exists exactly
// when the action happened). An empty r.ID gets a fresh "oa_" id. The
// actor is an operator id, "cli:<os user>" or "job:<name>"; the action is
// "<object kind>.<past participle>" (partner.revoked); details are short
// texts that never hold a secret or customer contact data.
func AppendAudit(ctx context.Context, tx AuditTx, r AuditRecord) error {
	for name, v := range map[string]string{"actor": r.Actor, "action": r.Action, "object kind": r.ObjectKind, "object id": r.ObjectID} {
		if v == "" || len(v) > 300 || bokat.CheckText(v, false) != "" {
			return fmt.Errorf("operator audit: the %s must be 1 to 300 characters of text", name)
		}
	}
	for k, v := range r.Details {
		if k == "" || len(k) > 100 || len(v) > 1000 || bokat.CheckText(k, false) != "" || bokat.CheckText(v, true) != "" {
			return fmt.Errorf("operator audit: detail %q is not short text", k)
		}
	}
	if r.At.IsZero() {
		return errors.New("operator audit: no time")
	}
	if r.ID == "" {
		u, err := uuid.NewV7()
		if err != nil {
			return err
		}
		r.ID = bokat.OperatorAuditIDPrefix + strings.ReplaceAll(u.String(), "-", "")
	}
	return tx.InsertOperatorAudit(ctx, r)
}

func joinScopes(scopes []bokat.Scope) string {
	parts := make([]string, len(scopes))
	for i, s := range scopes {
		parts[i] = string(s)
	}
	return strings.Join(parts, " ")
}

// formatDuration writes whole days as "30d" and anything else as Go does.
func formatDuration(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// sameMilli reports whether a and b are the same instant to the
// millisecond the store keeps, or both zero.
func sameMilli(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() == b.IsZero()
	}
	return a.UnixMilli() == b.UnixMilli()
}
