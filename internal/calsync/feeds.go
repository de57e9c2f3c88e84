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
	f, err := s.newFeed(ctx, providerID, rawURL, rule, source)
	if err != nil {
		return Feed{}, err
	}
	now := s.now().UTC()
	// The limit and the address already held are decided under the
	// provider's calendar lock, so two adds at once cannot pass them both.
	err = s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.LockProviderCalendar(ctx, providerID); err != nil {
			return err
		}
		switch st, err := tx.CalendarAddress(ctx, providerID, f.URL); {
		case err != nil:
			return err
		case st.Subscribed:
			return bokat.ErrConflict
		case st.Feeds >= MaxFeedsPerProvider:
			return tooMany()
		}
		return tx.InsertFeed(ctx, f, now)
	})
	switch {
	case errors.Is(err, bokat.ErrConflict):
		return Feed{}, invalid("url: the provider already has this calendar")
	case err != nil:
		return Feed{}, err
	}
	f.CreatedAt = now
	return f, nil
}

// newFeed returns the feed Add would store, its address checked.
func (s *Feeds) newFeed(ctx context.Context, providerID, rawURL string, rule Rule, source string) (Feed, error) {
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
	return Feed{ID: bokat.CalendarFeedIDPrefix + strings.ReplaceAll(uuid.Must(uuid.NewV7()).String(), "-", ""), ProviderID: providerID, URL: raw,
		Label: hostOf(raw), Rule: rule, Source: source}, nil
}

// feedAddress is the address a feed given as rawURL is stored and read at:
// trimmed, webcal:// read as https://.
func feedAddress(rawURL string) string {
	raw := strings.TrimSpace(rawURL)
	if rest, ok := strings.CutPrefix(raw, "webcal://"); ok {
		return "https://" + rest
	}
	return raw
}

// hostOf is a feed address's host, the label people see instead of the
// address ("" when it does not parse).
func hostOf(address string) string {
	u, err := url.Parse(address)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// CheckURL returns the address a feed would be read from, or a
// validation_failed Problem error saying why it cannot be.
func (s *Feeds) CheckURL(ctx context.Context, rawURL string) (string, error) {
	raw := feedAddress(rawURL)
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
// an unknown feed is bokat.ErrNotFound. The removal sticks: an import of a
// supply file naming the address leaves it out (SupplyChange.Dismissed)
// until the calendar is added again by hand (Add).
func (s *Feeds) Remove(ctx context.Context, providerID, feedID string) error {
	now := s.now().UTC()
	return s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.LockProviderCalendar(ctx, providerID); err != nil {
			return err
		}
		if err := tx.DismissFeed(ctx, providerID, feedID, now); err != nil {
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

// tooManyIssue is the issue of a calendar over MaxFeedsPerProvider.
var tooManyIssue = fmt.Sprintf("url: a provider has at most %d calendars", MaxFeedsPerProvider)

// tooMany refuses a calendar over MaxFeedsPerProvider.
func tooMany() error { return invalid(tooManyIssue) }

func invalid(issue string) error {
	return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The calendar subscription is not valid.", Issues: []string{issue}}
}

// SupplyResult says what applying a supply file's calendars did.
type SupplyResult struct {
	// Added, Removed and Kept count the subscriptions made, ended and
	// left as they were.
	Added, Removed, Kept int
	// Dismissed counts the calendars the file names that the provider
	// removed by hand (Remove), left out.
	Dismissed int
	// Changes says per provider (in the file's order) what was added and
	// removed, and which feeds the file does not name stay because they
	// were not added from a supply file (Own). Feeds carry ID, Label and
	// Rule, never their address.
	Changes []SupplyChange
	// Refused names each refused calendar, "prv_x calendars[1]: reason",
	// without its address.
	Refused []string
}

// SupplyChange is what a supply file changed of one provider's
// subscriptions.
type SupplyChange struct {
	ProviderID          string
	Added, Removed, Own []Feed
	// Dismissed are the hosts of the calendars the file names that were
	// removed from the provider by hand (Remove): they are not subscribed
	// again.
	Dismissed []string
}

// Changed reports whether applying the file wrote anything.
func (r SupplyResult) Changed() bool { return r.Added+r.Removed > 0 }

// ApplySupply makes each provider's subscriptions from the supply file
// (source supply) what the file's `calendars:` names: a calendar the
// provider lacks is added, one already subscribed is kept as it is (its
// rule included), and a feed added from a supply file that the file no
// longer names is removed with its busy times. A feed added on the
// provider's pages, through the provider API or by an operator stays,
// named in SupplyChange.Own. Providers the file does not name are left as
// they are. Every address is checked before anything is written; a refused
// one is reported in Refused and the others are still applied. All the
// additions and removals are one transaction, taking each changed
// provider's calendar lock, so the calendar revision moves with its
// commit.
//
// A provider without calendars in the file needs no opened addresses:
// ApplySupply then works on a store without the sealing key.
func (s *Feeds) ApplySupply(ctx context.Context, providers []bokat.ProviderSupply) (SupplyResult, error) {
	var res SupplyResult
	refs, err := s.store.FeedRefs(ctx)
	if err != nil {
		return res, err
	}
	byProvider := map[string][]Feed{}
	for _, f := range refs {
		byProvider[f.ProviderID] = append(byProvider[f.ProviderID], f)
	}
	type plan struct {
		SupplyChange
		add []Feed
	}
	var plans []plan
	for _, p := range providers {
		existing := byProvider[p.ID]
		if len(p.Calendars) > 0 && len(existing) > 0 {
			// The addresses are needed to tell which calendars are known.
			if existing, err = s.store.ProviderFeeds(ctx, p.ID); err != nil {
				return res, err
			}
		}
		named := make([]bool, len(existing))
		pl := plan{SupplyChange: SupplyChange{ProviderID: p.ID}}
		for i, c := range p.Calendars {
			raw := feedAddress(c.URL)
			if j := slices.IndexFunc(existing, func(f Feed) bool { return f.URL == raw }); j >= 0 {
				named[j] = true
				res.Kept++
				continue
			}
			// A calendar removed by hand is left out before its address is
			// checked: no lookup for an address that will not be read.
			switch dismissed, err := s.store.FeedDismissed(ctx, p.ID, raw); {
			case err != nil:
				return res, fmt.Errorf("subscribe %s calendars[%d]: %w", p.ID, i, err)
			case dismissed:
				pl.Dismissed = append(pl.Dismissed, hostOf(raw))
				res.Dismissed++
				continue
			}
			f, err := s.newFeed(ctx, p.ID, c.URL, Rule(c.Rule), SourceSupply)
			var be *bokat.Error
			switch {
			case errors.As(err, &be) && be.Code == bokat.CodeValidationFailed:
				res.Refused = append(res.Refused, fmt.Sprintf("%s calendars[%d]: %s", p.ID, i, strings.Join(be.Issues, "; ")))
				continue
			case err != nil:
				return res, fmt.Errorf("subscribe %s calendars[%d]: %w", p.ID, i, err)
			}
			pl.add = append(pl.add, f)
		}
		for j, f := range existing {
			switch {
			case named[j]:
			case f.Source == SourceSupply:
				pl.Removed = append(pl.Removed, f)
			default:
				pl.Own = append(pl.Own, f)
			}
		}
		if len(pl.add)+len(pl.Removed)+len(pl.Own)+len(pl.Dismissed) > 0 {
			plans = append(plans, pl)
		}
	}
	// The plans were made from reads outside the transaction; the
	// provider's hands may have moved since. Under each provider's
	// calendar lock the transaction decides again: a calendar removed by
	// hand meanwhile is left out (and one the import meant to remove is
	// gone already), one added by hand meanwhile is kept, and the limit
	// counts what the provider has now.
	now := s.now().UTC()
	var applied []SupplyChange
	var added, removed, kept, dismissed int
	var refused []string
	err = s.store.InTx(ctx, func(tx Tx) error {
		applied, added, removed, kept, dismissed, refused = nil, 0, 0, 0, 0, nil
		for _, pl := range plans {
			ch := pl.SupplyChange
			ch.Removed, ch.Dismissed = nil, slices.Clone(pl.Dismissed)
			if len(pl.add)+len(pl.Removed) > 0 {
				if err := tx.LockProviderCalendar(ctx, pl.ProviderID); err != nil {
					return err
				}
			}
			for _, f := range pl.Removed {
				switch err := tx.DeleteFeed(ctx, pl.ProviderID, f.ID); {
				case errors.Is(err, bokat.ErrNotFound): // removed by hand meanwhile
				case err != nil:
					return fmt.Errorf("unsubscribe %s from %s: %w", pl.ProviderID, f.ID, err)
				default:
					f.URL = ""
					ch.Removed = append(ch.Removed, f)
				}
			}
			for _, f := range pl.add {
				switch st, err := tx.CalendarAddress(ctx, pl.ProviderID, f.URL); {
				case err != nil:
					return fmt.Errorf("subscribe %s to a calendar on %s: %w", pl.ProviderID, f.Label, err)
				case st.Subscribed:
					kept++
				case st.Dismissed:
					ch.Dismissed = append(ch.Dismissed, f.Label)
					dismissed++
				case st.Feeds >= MaxFeedsPerProvider:
					refused = append(refused, fmt.Sprintf("%s calendar on %s: %s", pl.ProviderID, f.Label, tooManyIssue))
				default:
					if err := tx.InsertFeed(ctx, f, now); err != nil {
						return fmt.Errorf("subscribe %s to a calendar on %s: %w", pl.ProviderID, f.Label, err)
					}
					f.CreatedAt, f.URL = now, ""
					ch.Added = append(ch.Added, f)
				}
			}
			for i := range ch.Own {
				ch.Own[i].URL = ""
			}
			added, removed = added+len(ch.Added), removed+len(ch.Removed)
			applied = append(applied, ch)
		}
		return nil
	})
	if err != nil {
		return SupplyResult{Refused: res.Refused}, err
	}
	res.Added, res.Removed, res.Kept, res.Dismissed = added, removed, res.Kept+kept, res.Dismissed+dismissed
	res.Refused = append(res.Refused, refused...)
	res.Changes = applied
	return res, nil
}
