package calsync

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/webhook"
)

// MaxFeedsPerProvider bounds a provider's calendar subscriptions.
const MaxFeedsPerProvider = 10

// Feeds holds the use cases of a provider's calendar subscriptions: add,
// remove, list (with last sync and last error) and set a feed's rule. The
// provider pages, the provider API, the CLI and the supply import call
// them.
type Feeds struct {
	store Store
	guard *webhook.Guard
	now   func() time.Time
}

// NewFeeds returns the use cases; guard checks every address added (the
// webhook SSRF guard, development's AllowPrivate included).
func NewFeeds(store Store, guard *webhook.Guard, now func() time.Time) *Feeds {
	if now == nil {
		now = time.Now
	}
	return &Feeds{store: store, guard: guard, now: now}
}

// Add subscribes a provider to the feed at rawURL under rule, from source.
// A webcal:// address (as calendar applications share them) is read as
// https://. A refused address is a validation_failed Problem error naming
// the reason, never echoing the address; an address the provider has
// already, a validation_failed too; an unknown provider bokat.ErrNotFound.
func (s *Feeds) Add(ctx context.Context, providerID, rawURL string, rule Rule, source string) (Feed, error) {
	raw, err := s.CheckURL(ctx, rawURL)
	if err != nil {
		return Feed{}, err
	}
	if rule == "" {
		rule = RuleBusyOnly
	}
	if _, err := ParseRule(string(rule)); err != nil {
		return Feed{}, invalid("rule: must be busy_only, everything or all_day_busy")
	}
	u, _ := url.Parse(raw)
	f := Feed{ID: bokat.CalendarFeedIDPrefix + strings.ReplaceAll(uuid.Must(uuid.NewV7()).String(), "-", ""), ProviderID: providerID, URL: raw,
		Label: u.Hostname(), Rule: rule, Source: source}
	now := s.now().UTC()
	existing, err := s.store.ProviderFeeds(ctx, providerID)
	if err != nil {
		return Feed{}, err
	}
	if len(existing) >= MaxFeedsPerProvider {
		return Feed{}, invalid(fmt.Sprintf("url: a provider has at most %d calendars", MaxFeedsPerProvider))
	}
	err = s.store.InTx(ctx, func(tx Tx) error { return tx.InsertFeed(ctx, f, now) })
	switch {
	case errors.Is(err, bokat.ErrConflict):
		return Feed{}, invalid("url: the provider already has this calendar")
	case err != nil:
		return Feed{}, err
	}
	f.CreatedAt = now
	return f, nil
}

// CheckURL returns the address a feed would be read from, or a
// validation_failed Problem error saying why it cannot be.
func (s *Feeds) CheckURL(ctx context.Context, rawURL string) (string, error) {
	raw := strings.TrimSpace(rawURL)
	if rest, ok := strings.CutPrefix(raw, "webcal://"); ok {
		raw = "https://" + rest
	}
	if _, err := s.guard.CheckURL(ctx, raw); err != nil {
		var rej *webhook.RejectedError
		if errors.As(err, &rej) {
			return "", invalid("url: " + rej.Reason)
		}
		return "", err
	}
	return raw, nil
}

// Remove ends a provider's subscription and frees its busy times at once;
// an unknown feed is bokat.ErrNotFound.
func (s *Feeds) Remove(ctx context.Context, providerID, feedID string) error {
	return s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.LockProviderCalendar(ctx, providerID); err != nil {
			return err
		}
		return tx.DeleteFeed(ctx, providerID, feedID)
	})
}

// List returns a provider's feeds with their last sync and last error.
func (s *Feeds) List(ctx context.Context, providerID string) ([]Feed, error) {
	return s.store.ProviderFeeds(ctx, providerID)
}

// SetRule changes which of a feed's events block; the feed is read again
// at the next round. An unknown rule is validation_failed, an unknown feed
// bokat.ErrNotFound.
func (s *Feeds) SetRule(ctx context.Context, providerID, feedID string, rule Rule) error {
	if _, err := ParseRule(string(rule)); err != nil || rule == "" {
		return invalid("rule: must be busy_only, everything or all_day_busy")
	}
	now := s.now().UTC()
	return s.store.InTx(ctx, func(tx Tx) error { return tx.SetFeedRule(ctx, providerID, feedID, rule, now) })
}

// Conflicts returns the provider's confirmed bookings still to come that
// a synced busy time overlaps, for the provider's page.
func (s *Feeds) Conflicts(ctx context.Context, providerID string) ([]Conflict, error) {
	return s.store.ProviderConflicts(ctx, providerID, s.now().UTC())
}

// Stale reports whether a feed has failed for longer than staleAfter at
// now: its provider is then not directly bookable.
func (f Feed) Stale(now time.Time, staleAfter time.Duration) bool {
	return !f.FailingSince.IsZero() && now.Sub(f.FailingSince) >= staleAfter
}

func invalid(issue string) error {
	return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The calendar subscription is not valid.", Issues: []string{issue}}
}

// SupplyResult says what subscribing a supply file's calendars did.
type SupplyResult struct {
	// Added and Kept count the subscriptions made and those already there.
	Added, Kept int
	// Refused names each refused calendar, "prv_x calendars[1]: reason",
	// without its address.
	Refused []string
}

// SubscribeSupply subscribes each provider to the calendars of the supply
// file that it lacks (source supply). A calendar already subscribed is
// kept as it is; one the guard refuses is reported in Refused and the
// others are still added. Other errors end it.
func (s *Feeds) SubscribeSupply(ctx context.Context, providers []bokat.ProviderSupply) (SupplyResult, error) {
	var res SupplyResult
	for _, p := range providers {
		if len(p.Calendars) == 0 {
			continue
		}
		existing, err := s.store.ProviderFeeds(ctx, p.ID)
		if err != nil {
			return res, err
		}
		for i, c := range p.Calendars {
			raw := strings.TrimSpace(c.URL)
			if rest, ok := strings.CutPrefix(raw, "webcal://"); ok {
				raw = "https://" + rest
			}
			if slices.ContainsFunc(existing, func(f Feed) bool { return f.URL == raw }) {
				res.Kept++
				continue
			}
			_, err := s.Add(ctx, p.ID, c.URL, Rule(c.Rule), SourceSupply)
			var be *bokat.Error
			switch {
			case errors.As(err, &be) && be.Code == bokat.CodeValidationFailed:
				res.Refused = append(res.Refused, fmt.Sprintf("%s calendars[%d]: %s", p.ID, i, strings.Join(be.Issues, "; ")))
			case err != nil:
				return res, fmt.Errorf("subscribe %s calendars[%d]: %w", p.ID, i, err)
			default:
				res.Added++
			}
		}
	}
	return res, nil
}
