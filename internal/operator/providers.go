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
// provider read ("" for every provider).
type HealthQuery struct {
	Now, FailuresSince, StaleBefore time.Time
	ProviderID                      string
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

// healthQuery is the query of the health of the provider id ("": every
// provider) at now.
func (s *Service) healthQuery(id string) HealthQuery {
	now := s.now()
	return HealthQuery{Now: now, FailuresSince: now.Add(-FailureWindow), StaleBefore: now.Add(-s.staleAfter), ProviderID: id}
}

// Providers returns every provider's health.
func (s *Service) Providers(ctx context.Context) ([]ProviderHealth, error) {
	return s.store.ProviderHealth(ctx, s.healthQuery(""))
}

// Provider returns one provider's health, reading only that provider's
// rows; an unknown provider is bokat.ErrNotFound.
func (s *Service) Provider(ctx context.Context, id string) (ProviderHealth, error) {
	list, err := s.store.ProviderHealth(ctx, s.healthQuery(id))
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
