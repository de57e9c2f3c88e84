package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"bokat"
	"bokat/internal/calfeed"
	"bokat/internal/calsync"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/webhook"
	"bokat/internal/wire"
)

const calendarUsage = "bokat provider calendar add PROVIDER_ID URL [--rule busy_only|everything|all_day_busy] | " +
	"list PROVIDER_ID | remove PROVIDER_ID FEED_ID | rule PROVIDER_ID FEED_ID RULE"

// calendarConfig is the configuration of `bokat provider calendar`: the
// store, the key that seals feed addresses and the guard's development
// switch, as given to serve.
type calendarConfig struct {
	commonConfig
	SecretKey    string
	AllowPrivate bool
	Rule         string
}

// runProviderCalendar adds, lists and removes a provider's calendar
// subscriptions and sets a feed's rule, through the same use cases the
// provider pages use, each write with its provider audit row (actor
// operator). Feed addresses are secrets: list shows their host.
func runProviderCalendar(ctx context.Context, args []string, e env) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s", errUsage, calendarUsage)
	}
	verb, args := args[0], args[1:]
	arity := map[string]int{"add": 2, "list": 1, "remove": 2, "rule": 3}
	n, ok := arity[verb]
	if !ok {
		return fmt.Errorf("%w: %s", errUsage, calendarUsage)
	}
	fs := newFlagSet("provider calendar "+verb, e)
	var c calendarConfig
	c.commonConfig.register(fs)
	fs.Text(&c.SecretKey, "secret-key", "BOKAT_SECRET_KEY", "", "base64 key (32 bytes) sealing stored secrets, as given to serve; comma-separated when rotating",
		func(s string) error {
			_, err := parseSecretKeys(s)
			return err
		})
	fs.Bool(&c.AllowPrivate, "webhook-allow-private", "BOKAT_WEBHOOK_ALLOW_PRIVATE", false,
		"let a calendar live on http:// and private or loopback addresses (development only), as serve's setting")
	if verb == "add" {
		fs.Text(&c.Rule, "rule", "", string(calsync.RuleBusyOnly), "which events block: busy_only, everything or all_day_busy",
			func(s string) error { _, err := calsync.ParseRule(s); return err })
	}
	pos, err := fs.parse(args)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(pos) != n {
		return fmt.Errorf("%w: %s", errUsage, calendarUsage)
	}
	if err := c.validate(); err != nil {
		return err
	}
	if c.production() && c.AllowPrivate {
		return fmt.Errorf("%w: %s is development only and refused in production", errUsage, fs.label("webhook-allow-private"))
	}
	db, _, _, err := openSealedStore(ctx, c.commonConfig, c.SecretKey)
	if err != nil {
		return err
	}
	defer db.Close()
	cals := provider.NewCalendars(provider.CalendarsConfig{Store: sqlstore.Bind[calsync.Tx](db),
		InTx: sqlstore.Bind[provider.CalendarTx](db).InTx, Guard: webhook.NewGuard(net.DefaultResolver, c.AllowPrivate), Now: e.now})
	if err := calendarCommand(ctx, cals, verb, pos, calsync.Rule(c.Rule), e); err != nil {
		return explainCalendarError(err)
	}
	return nil
}

func calendarCommand(ctx context.Context, cals *provider.Calendars, verb string, pos []string, rule calsync.Rule, e env) error {
	operator := provider.User{ProviderID: pos[0], ID: provider.OperatorActor}
	switch verb {
	case "add":
		f, err := cals.Add(ctx, operator, pos[1], rule)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s %s %s (polled within one sync interval of serve)\n", f.ID, f.Label, f.Rule)
	case "list":
		list, err := cals.List(ctx, operator)
		if err != nil {
			return err
		}
		for _, f := range list {
			fmt.Fprintf(e.stdout, "%s %s rule=%s source=%s busy=%d last_synced=%s", f.ID, f.Label, f.Rule, f.Source, f.BusyCount,
				stamp(f.LastSyncedAt))
			if f.LastError != "" {
				fmt.Fprintf(e.stdout, " failing_since=%s last_error=%q", stamp(f.FailingSince), f.LastError)
			}
			fmt.Fprintln(e.stdout)
		}
	case "remove":
		if err := cals.Remove(ctx, operator, pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "removed %s; its busy times no longer block\n", pos[1])
	case "rule":
		r, err := calsync.ParseRule(pos[2])
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if _, err := cals.SetRule(ctx, operator, pos[1], r); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s now %s; read again at the next round\n", pos[1], r)
	}
	return nil
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// explainCalendarError turns the use cases' errors into the command's.
func explainCalendarError(err error) error {
	var be *bokat.Error
	switch {
	case errors.As(err, &be) && len(be.Issues) > 0:
		return fmt.Errorf("%w: %s", errUsage, strings.Join(be.Issues, "; "))
	case errors.Is(err, bokat.ErrNotFound):
		return fmt.Errorf("no such provider or calendar: %w", err)
	}
	return err
}

// supplyCalendars are the settings `supply import` needs for the
// calendars a supply file names: the sealing key and the guard's
// development switch.
type supplyCalendars struct {
	secretKey    string
	allowPrivate bool
}

func registerCalendarSettings(fs *flagSet) *supplyCalendars {
	var c supplyCalendars
	fs.Text(&c.secretKey, "secret-key", "BOKAT_SECRET_KEY", "", "base64 key (32 bytes) sealing stored secrets (the calendars' addresses), as given to serve",
		func(s string) error {
			_, err := parseSecretKeys(s)
			return err
		})
	fs.Bool(&c.allowPrivate, "webhook-allow-private", "BOKAT_WEBHOOK_ALLOW_PRIVATE", false,
		"let a calendar live on http:// and private or loopback addresses (development only), as serve's setting")
	return &c
}

func hasCalendars(providers []bokat.ProviderSupply) bool {
	for _, p := range providers {
		if len(p.Calendars) > 0 {
			return true
		}
	}
	return false
}

// ready refuses, before an import commits, a file naming calendars that
// apply could not take: a development switch in production, or production
// without the key sealing the calendars' addresses (secretKeyring's rule;
// the token pepper is required in production before anything is read).
func (c *supplyCalendars) ready(sc *storeCommand, providers []bokat.ProviderSupply) error {
	switch {
	case !hasCalendars(providers) || !sc.production():
		return nil
	case c.allowPrivate:
		return fmt.Errorf("%w: %s is development only and refused in production", errUsage, sc.fs.label("webhook-allow-private"))
	}
	return requireSecretKey(sc.commonConfig, c.secretKey)
}

// apply makes the providers' supply-file subscriptions what the file names
// (calsync.Feeds.ApplySupply) and reports per provider what it added and
// removed, and which calendars not from a supply file stay; a refused
// calendar fails the command after the rest is applied. A file naming no
// calendar still ends the subscriptions a former file made.
//
// db is the store the file was imported into; the calendars' addresses are
// sealed, so a file naming some is applied through the store opened with
// the vault.
func (c *supplyCalendars) apply(ctx context.Context, sc *storeCommand, db *sqlstore.DB, providers []bokat.ProviderSupply, e env) error {
	if hasCalendars(providers) {
		sealed, _, _, err := openSealedStore(ctx, sc.commonConfig, c.secretKey)
		if err != nil {
			return fmt.Errorf("calendars: %w", err)
		}
		defer sealed.Close()
		db = sealed
	}
	feeds := calsync.NewFeeds(sqlstore.Bind[calsync.Tx](db), webhook.NewGuard(net.DefaultResolver, c.allowPrivate), e.now)
	res, err := feeds.ApplySupply(ctx, providers)
	for _, r := range res.Refused {
		fmt.Fprintln(e.stderr, r)
	}
	if err != nil {
		return fmt.Errorf("calendars: %w", err)
	}
	if !hasCalendars(providers) && len(res.Changes) == 0 {
		return nil
	}
	dismissed := ""
	if res.Dismissed > 0 {
		dismissed = fmt.Sprintf(", %d left out", res.Dismissed)
	}
	fmt.Fprintf(e.stdout, "calendars: %d added, %d removed, %d kept, %d refused%s\n", res.Added, res.Removed, res.Kept,
		len(res.Refused), dismissed)
	list := func(fs []calsync.Feed) string {
		parts := make([]string, len(fs))
		for i, f := range fs {
			parts[i] = f.ID + " (" + f.Label + ")"
		}
		return strings.Join(parts, ", ")
	}
	for _, ch := range res.Changes {
		var parts []string
		if len(ch.Added) > 0 {
			parts = append(parts, "added "+list(ch.Added))
		}
		if len(ch.Removed) > 0 {
			parts = append(parts, "removed "+list(ch.Removed)+"; their busy times no longer block")
		}
		if len(ch.Own) > 0 {
			parts = append(parts, "kept "+list(ch.Own)+": not added from a supply file")
		}
		if len(ch.Dismissed) > 0 {
			parts = append(parts, "left out the calendar(s) on "+strings.Join(ch.Dismissed, ", ")+
				": removed from the provider by hand (added again by hand, they count again)")
		}
		fmt.Fprintf(e.stdout, "  %s: %s\n", ch.ProviderID, strings.Join(parts, "; "))
	}
	if len(res.Refused) > 0 {
		return fmt.Errorf("%d calendar(s) refused; the rest of the file was imported", len(res.Refused))
	}
	return nil
}

// calendarSyncConfig is serve's configuration of calendar sync.
type calendarSyncConfig struct {
	CalendarSyncInterval time.Duration
	CalendarStaleAfter   time.Duration
}

// productionMinSyncInterval is the shortest poll interval production
// allows: shorter ones are for testing a feed in development.
const productionMinSyncInterval = time.Minute

func (c *calendarSyncConfig) register(fs *flagSet) {
	fs.DurationIn(&c.CalendarSyncInterval, "calendar-sync-interval", "BOKAT_CALENDAR_SYNC_INTERVAL", calsync.DefaultInterval,
		calsync.MinInterval, 24*time.Hour, "how often each provider calendar feed is polled, 1m to 24h (down to 1s in development)")
	fs.DurationIn(&c.CalendarStaleAfter, "calendar-stale-after", "BOKAT_CALENDAR_STALE_AFTER", calsync.DefaultStaleAfter,
		time.Minute, 30*24*time.Hour, "how long a calendar feed may fail before its provider is not directly bookable")
}

func (c *calendarSyncConfig) validateProduction(fs *flagSet) error {
	if c.CalendarSyncInterval < productionMinSyncInterval {
		return fmt.Errorf("%w: %s: must be at least %s in production (shorter intervals are development only), got %s",
			errUsage, fs.label("calendar-sync-interval"), productionMinSyncInterval, c.CalendarSyncInterval)
	}
	return nil
}

// calendarPolls counts the calendar sync worker's polls in serve's
// metrics: bokat_calendar_sync_polls_total by result (changed, unchanged,
// failed), bokat_calendar_sync_rows_total, the calendar rows they wrote,
// and bokat_calendar_sync_rounds_total.
type calendarPolls struct {
	polls  *prometheus.CounterVec
	rows   prometheus.Counter
	rounds prometheus.Counter
}

func newCalendarPolls(reg prometheus.Registerer) *calendarPolls {
	p := &calendarPolls{
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bokat_calendar_sync_polls_total",
			Help: "Provider calendar feed polls by result: changed (busy times written), unchanged (304 or the same body), failed.",
		}, []string{"result"}),
		rows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bokat_calendar_sync_rows_total",
			Help: "Calendar rows (busy times added or removed) written by provider calendar feed polls.",
		}),
		rounds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bokat_calendar_sync_rounds_total",
			Help: "Rounds of the calendar sync worker, those that found no feed due included: it stopped if this stops.",
		}),
	}
	reg.MustRegister(p.polls, p.rows, p.rounds)
	for _, r := range []string{"changed", "unchanged", "failed"} {
		p.polls.WithLabelValues(r)
	}
	return p
}

func (p *calendarPolls) CalendarRound() { p.rounds.Inc() }

func (p *calendarPolls) CalendarPoll(result string, rows int) {
	p.polls.WithLabelValues(result).Inc()
	p.rows.Add(float64(rows))
}

// calendarSyncWorker is serve's calendar sync loop: providers' feeds
// through the webhook guard (opened by --webhook-allow-private), conflicts
// raised by the booking lifecycle, stale feeds told by the mailer. It
// reports to readiness (heartbeat "calendar-sync") and to the metrics. It
// looks for due feeds every tick, the worker's default when zero (always,
// outside tests).
func calendarSyncWorker(b wire.Base, c serveConfig, uc *wire.UseCases, op *ops, log *slog.Logger, baseURL string, tick time.Duration) (worker, error) {
	domain, err := calfeed.UIDDomain(baseURL)
	if err != nil {
		return worker{}, err
	}
	cfg := calsync.Config{
		Store:        sqlstore.Bind[calsync.Tx](b.Store),
		Fetch:        calsync.FetchConfig{Guard: webhook.NewGuard(net.DefaultResolver, c.WebhookAllowPrivate)},
		Interval:     c.CalendarSyncInterval,
		StaleAfter:   c.CalendarStaleAfter,
		OwnUIDDomain: domain,
		FollowUp:     uc.Bookings,
		Mail:         op.mailer,
		Observer:     newCalendarPolls(op.metrics.Registry()),
		Tick:         tick,
		Now:          b.Now,
		Log:          log.With("worker", "calendar-sync"),
	}
	cfg.Heartbeat = op.heartbeats.Register("calendar-sync", cfg.MaxSilence())
	w, err := calsync.NewWorker(cfg)
	if err != nil {
		return worker{}, err
	}
	return worker{name: "calendar-sync", run: w.Run}, nil
}
