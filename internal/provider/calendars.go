package provider

import (
	"context"
	"slices"
	"time"

	"bokat/internal/calsync"
	"bokat/internal/webhook"
)

// A provider's own calendars (iCalendar subscriptions whose busy times
// block the provider's slots) as the provider pages and the provider API
// keep them. The subscriptions themselves are calendar sync's use cases
// (calsync.Feeds); Calendars runs them for a provider user or token, each
// write in one transaction with its provider audit row, like every other
// provider write. Owners and staff may both keep them, as they keep blocks
// and hours.

// Audit actions of calendar subscriptions.
const (
	ActionCalendarAdded   = "calendar.added"
	ActionCalendarRemoved = "calendar.removed"
	ActionCalendarRule    = "calendar.rule"
)

// CalendarTx is a write transaction of the calendar use cases: calendar
// sync's, and the audit row.
type CalendarTx interface {
	calsync.Tx
	auditor
}

// CalendarsConfig configures Calendars.
type CalendarsConfig struct {
	// Store reads the subscriptions and their conflicts (its own InTx is
	// not used: writes go through InTx).
	Store calsync.Store
	// InTx runs one write transaction.
	InTx func(ctx context.Context, fn func(CalendarTx) error) error
	// Guard judges every address added (the webhook SSRF guard; with
	// AllowPrivate in development, http and loopback addresses too).
	Guard *webhook.Guard
	// StaleAfter is how long a feed may fail before its provider is not
	// directly bookable (calsync.DefaultStaleAfter when zero).
	StaleAfter time.Duration
	// ExportURL, when set, returns the address of a provider's own Bokat
	// feed (its bookings), which the calendar page offers to owners.
	ExportURL func(providerID string) string
	Now       func() time.Time
}

// Calendars runs the calendar subscription use cases for provider users
// and tokens, and for the operator's commands (a User whose ID is
// OperatorActor).
type Calendars struct {
	cfg CalendarsConfig
	// written, in a keyed write's copy only, receives the feed the write
	// stored (the provider API answers with it).
	written *calsync.Feed
}

// NewCalendars returns the calendar use cases.
func NewCalendars(cfg CalendarsConfig) *Calendars {
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = calsync.DefaultStaleAfter
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Calendars{cfg: cfg}
}

// StaleAfter is how long a feed may fail before it is stale.
func (c *Calendars) StaleAfter() time.Duration { return c.cfg.StaleAfter }

// ExportURL returns the address of the provider's own Bokat feed, or ""
// when none is served.
func (c *Calendars) ExportURL(providerID string) string {
	if c.cfg.ExportURL == nil {
		return ""
	}
	return c.cfg.ExportURL(providerID)
}

// keyed returns a copy of c whose writes run in inTx (a keyed write's
// transaction) and record the feed they store.
func (c *Calendars) keyed(inTx func(ctx context.Context, fn func(CalendarTx) error) error) *Calendars {
	cp := *c
	cp.cfg.InTx = inTx
	cp.written = &calsync.Feed{}
	return &cp
}

// Written returns the feed the last write of a keyed write's use cases
// stored (zero for a shared Calendars).
func (c *Calendars) Written() calsync.Feed {
	if c.written == nil {
		return calsync.Feed{}
	}
	return *c.written
}

// feeds returns calendar sync's use cases for a write by u: each of their
// transactions also writes u's audit row.
func (c *Calendars) feeds(u User) *calsync.Feeds {
	return calsync.NewFeeds(auditedStore{Store: c.cfg.Store, c: c, u: u}, c.cfg.Guard, c.cfg.Now)
}

// List returns the provider's subscriptions, oldest first, with their last
// sync and last error.
func (c *Calendars) List(ctx context.Context, u User) ([]calsync.Feed, error) {
	return c.cfg.Store.ProviderFeeds(ctx, u.ProviderID)
}

// Conflicts returns the provider's confirmed bookings still to come that a
// synced busy time overlaps, by slot start.
func (c *Calendars) Conflicts(ctx context.Context, u User) ([]calsync.Conflict, error) {
	return c.cfg.Store.ProviderConflicts(ctx, u.ProviderID, c.cfg.Now().UTC())
}

// Add subscribes u's provider to the feed at rawURL (https, or webcal://
// read as https) under rule (busy_only when empty). A refused address is
// a validation_failed bokat.Error naming the reason without the address.
// The feed's source is the operator's when u is OperatorActor, else the
// provider's.
func (c *Calendars) Add(ctx context.Context, u User, rawURL string, rule calsync.Rule) (calsync.Feed, error) {
	source := calsync.SourceProvider
	if u.ID == OperatorActor {
		source = calsync.SourceOperator
	}
	return c.feeds(u).Add(ctx, u.ProviderID, rawURL, rule, source)
}

// Remove ends one of the provider's subscriptions and frees its busy times;
// an unknown feed is bokat.ErrNotFound.
func (c *Calendars) Remove(ctx context.Context, u User, feedID string) error {
	return c.feeds(u).Remove(ctx, u.ProviderID, feedID)
}

// SetRule changes which of a feed's events block, and returns the feed as
// it stands; the feed is read again at the next round. An unknown feed is
// bokat.ErrNotFound, an unknown rule validation_failed.
func (c *Calendars) SetRule(ctx context.Context, u User, feedID string, rule calsync.Rule) (calsync.Feed, error) {
	list, err := c.List(ctx, u)
	if err != nil {
		return calsync.Feed{}, err
	}
	var f calsync.Feed
	if i := slices.IndexFunc(list, func(f calsync.Feed) bool { return f.ID == feedID }); i >= 0 {
		f = list[i]
	}
	f.Rule = rule
	if c.written != nil {
		*c.written = f
	}
	if err := c.feeds(u).SetRule(ctx, u.ProviderID, feedID, rule); err != nil {
		return calsync.Feed{}, err
	}
	return f, nil
}

// auditedStore is calendar sync's store whose transactions audit u's
// writes.
type auditedStore struct {
	calsync.Store
	c *Calendars
	u User
}

func (s auditedStore) InTx(ctx context.Context, fn func(calsync.Tx) error) error {
	return s.c.cfg.InTx(ctx, func(tx CalendarTx) error { return fn(auditedTx{CalendarTx: tx, c: s.c, u: s.u}) })
}

// auditedTx writes the audit row of each subscription change in the
// change's transaction. The notes hold the host and the rule, never the
// address.
type auditedTx struct {
	CalendarTx
	c *Calendars
	u User
}

func (tx auditedTx) InsertFeed(ctx context.Context, f calsync.Feed, now time.Time) error {
	if err := tx.CalendarTx.InsertFeed(ctx, f, now); err != nil {
		return err
	}
	if tx.c.written != nil {
		*tx.c.written = f
		tx.c.written.CreatedAt = now
	}
	return audit(ctx, tx.CalendarTx, tx.u.ProviderID, tx.u.ID, now, ActionCalendarAdded, "calendar_feed", f.ID,
		"host="+f.Label+" rule="+string(f.Rule))
}

func (tx auditedTx) DeleteFeed(ctx context.Context, providerID, feedID string) error {
	if err := tx.CalendarTx.DeleteFeed(ctx, providerID, feedID); err != nil {
		return err
	}
	return audit(ctx, tx.CalendarTx, providerID, tx.u.ID, tx.c.cfg.Now(), ActionCalendarRemoved, "calendar_feed", feedID, "")
}

func (tx auditedTx) SetFeedRule(ctx context.Context, providerID, feedID string, rule calsync.Rule, now time.Time) error {
	if err := tx.CalendarTx.SetFeedRule(ctx, providerID, feedID, rule, now); err != nil {
		return err
	}
	return audit(ctx, tx.CalendarTx, providerID, tx.u.ID, now, ActionCalendarRule, "calendar_feed", feedID, "rule="+string(rule))
}
