package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"bokat"
	"bokat/internal/calsync"
	"bokat/internal/provider"
	"bokat/internal/schedule"
	"bokat/internal/supply"
)

// ProviderHealth is a provider as the console's providers page shows it.
type ProviderHealth struct {
	ID, Name string
	Active   bool
	// PausedUntil is zero unless the provider takes no new bookings until
	// then.
	PausedUntil time.Time
	// Users is how many people have accounts; LastSignIn the latest
	// sign-in of any of them (zero: never).
	Users      int
	LastSignIn time.Time
	// OpenInvitations are invitations not yet taken up.
	OpenInvitations int
	// MessageFailures counts the provider's booking messages that failed
	// in the period asked for; LastMessageError is the latest one's error.
	MessageFailures  int
	LastMessageError string
	Feeds            []FeedHealth
}

// FeedHealth is the sync health of one subscribed calendar.
type FeedHealth struct {
	ID, Label    string
	LastSyncedAt time.Time
	// LastError is a summary without the feed's address.
	LastError    string
	FailingSince time.Time
	Stale        bool
}

// HealthQuery is the instants the providers' health is read at, and the
// providers read.
type HealthQuery struct {
	Now, FailuresSince, StaleBefore time.Time
	ProviderIDs                     []string
}

// ProviderBrief is what the providers list matches and filters every
// provider on: its name and id, and whether it needs an operator's look.
type ProviderBrief struct {
	ID, Name string
	Active   bool
	Paused   bool
	// MessageFailed: a message to the provider failed in the period asked
	// for.
	MessageFailed bool
	// CalendarFailing: a calendar of the provider's is failing (stale or
	// not yet).
	CalendarFailing bool
}

// NeedsAttention reports whether the provider needs an operator's look: it
// is inactive or paused, a message to it failed, or a calendar of its is
// failing or stale.
func (b ProviderBrief) NeedsAttention() bool {
	return !b.Active || b.Paused || b.MessageFailed || b.CalendarFailing
}

// Health periods.
const (
	// FailureWindow is how far back message failures are counted.
	FailureWindow = 30 * 24 * time.Hour
	// StaleAfter is how long a calendar may fail before it is stale when
	// the console is not told otherwise (PagesConfig.CalendarStaleAfter):
	// the sync worker's default.
	StaleAfter = calsync.DefaultStaleAfter
)

// healthQuery is the query of the health of the providers ids at now.
func (s *Service) healthQuery(now time.Time, ids []string) HealthQuery {
	return HealthQuery{Now: now, FailuresSince: now.Add(-FailureWindow), StaleBefore: now.Add(-s.staleAfter), ProviderIDs: ids}
}

// ProviderFilter narrows the providers list.
type ProviderFilter struct {
	// Search is a part of a provider's name (in any case) or id; "" lets
	// every provider through.
	Search string
	// Attention lets through only the providers that need an operator's
	// look (ProviderBrief.NeedsAttention).
	Attention bool
}

// FindProviders returns the health of the first limit providers, by name,
// that the filter lets through, and how many it lets through. It reads
// every provider's brief, and the health (people, invitations, messages,
// calendars) of those it returns only: at national size the list stays a
// page's work.
func (s *Service) FindProviders(ctx context.Context, f ProviderFilter, limit int) ([]ProviderHealth, int, error) {
	now := s.now()
	briefs, err := s.store.ProviderBriefs(ctx, now.Add(-FailureWindow))
	if err != nil {
		return nil, 0, err
	}
	needle := strings.ToLower(f.Search)
	var ids []string
	matched := 0
	for _, b := range briefs {
		if needle != "" && !strings.Contains(strings.ToLower(b.Name), needle) && !strings.Contains(b.ID, needle) {
			continue
		}
		if f.Attention && !b.NeedsAttention() {
			continue
		}
		if matched++; len(ids) < limit {
			ids = append(ids, b.ID)
		}
	}
	if len(ids) == 0 {
		return nil, matched, nil
	}
	list, err := s.store.ProviderHealth(ctx, s.healthQuery(now, ids))
	return list, matched, err
}

// Provider returns one provider's health, reading only that provider's
// rows; an unknown provider is bokat.ErrNotFound.
func (s *Service) Provider(ctx context.Context, id string) (ProviderHealth, error) {
	list, err := s.store.ProviderHealth(ctx, s.healthQuery(s.now(), []string{id}))
	if err != nil {
		return ProviderHealth{}, err
	}
	if len(list) != 1 {
		return ProviderHealth{}, fmt.Errorf("provider %s: %w", id, bokat.ErrNotFound)
	}
	return list[0], nil
}

// MaxPauseDays bounds how far ahead an operator's pause may end, as the
// provider's own does.
const MaxPauseDays = provider.MaxAheadDays

// Pause stops the provider's new bookings until the start of the date
// (YYYY-MM-DD, after today, at most MaxPauseDays ahead), or ends its pause
// when until is "", as the provider's own pause does; confirmed bookings
// stand. The provider's audit and the operator's each get their row, in
// one transaction. A bad date fails with ErrInvalid, an unknown provider
// with bokat.ErrNotFound.
func (s *Service) Pause(ctx context.Context, op Operator, providerID, until, note string) error {
	note, err := cleanNote(note, 2, NoteMax)
	if err != nil {
		return err
	}
	var at time.Time
	action, detail := ActionProviderUnpaused, "resumed"
	if strings.TrimSpace(until) != "" {
		d, err := supply.ParseDate(strings.TrimSpace(until))
		today := schedule.DateOf(s.now())
		if err != nil || !d.After(today) || d.After(today.AddDays(MaxPauseDays)) {
			return fmt.Errorf("%w: the date must be after today, at most %d days ahead", ErrInvalid, MaxPauseDays)
		}
		at, action, detail = d.At(0), ActionProviderPaused, "until="+d.String()
	}
	now := s.now()
	return s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.LockProviderCalendar(ctx, providerID); err != nil {
			return err
		}
		if _, err := tx.ProviderName(ctx, providerID); err != nil {
			return err
		}
		if err := tx.SetProviderPause(ctx, providerID, at, now); err != nil {
			return err
		}
		id, err := newID(bokat.ProviderAuditIDPrefix)
		if err != nil {
			return err
		}
		if err := tx.InsertProviderAudit(ctx, provider.AuditEntry{ID: id, ProviderID: providerID, Actor: provider.OperatorActor,
			At: now, Action: provider.ActionPauseSet, ObjectType: "provider", ObjectID: providerID, Note: detail}); err != nil {
			return err
		}
		return Audit(ctx, tx, op.ID, now, action, "provider", providerID, details("change", detail, "note", note))
	})
}

// InviteProviderUser invites a person to a provider's pages with the role
// (owner or staff), as `bokat provider invite` does, with the provider's
// audit row and the operator's in one transaction. A bad address or role
// fails with ErrInvalid, an address with an account with
// bokat.ErrConflict, an unknown provider with bokat.ErrNotFound.
func (s *Service) InviteProviderUser(ctx context.Context, op Operator, providerID, email, role string) (provider.Invitation, error) {
	r, err := provider.ParseRole(role)
	if err != nil {
		return provider.Invitation{}, fmt.Errorf("%w: role", ErrInvalid)
	}
	now := s.now()
	var inv provider.Invitation
	err = s.store.InTx(ctx, func(tx Tx) error {
		var err error
		if inv, err = provider.InviteInTx(ctx, tx, provider.OperatorActor, providerID, email, r, now); err != nil {
			return err
		}
		return Audit(ctx, tx, op.ID, now, ActionProviderInvited, "provider", providerID,
			details("invitation", inv.ID, "role", string(r)))
	})
	if err != nil {
		if errors.Is(err, provider.ErrInvalid) {
			return provider.Invitation{}, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		return provider.Invitation{}, err
	}
	return inv, nil
}
