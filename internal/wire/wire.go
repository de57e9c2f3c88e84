// Package wire builds the service from its parts, in the order each needs
// the ones before it: the store and its keys, the clock, the catalog and the
// contract (a Base), then the use cases, the webhook delivery workers, and
// the HTTP API on top. serve (cmd/bokat), the load tool (cmd/bokat-load) and
// the API's tests (internal/httpapi) all build through it; each says what
// it varies in Options, and what only it has (serve's mailer, Redis, the
// notification worker; a test's recording sender) it builds itself and
// hands in.
package wire

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"bokat/api"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/calfeed"
	"bokat/internal/calsync"
	"bokat/internal/catalog"
	"bokat/internal/credentials"
	"bokat/internal/followup"
	"bokat/internal/httpapi"
	"bokat/internal/oauth"
	"bokat/internal/operator"
	"bokat/internal/outbox"
	"bokat/internal/provider"
	"bokat/internal/ratelimit"
	"bokat/internal/sqlstore"
	"bokat/internal/telemetry"
	"bokat/internal/testrealm"
	"bokat/internal/webhook"
)

// Keys are the secrets the parts are keyed with, already resolved (read
// from the configuration, generated, or fixed by a test).
type Keys struct {
	// Hasher keys the hashes of tokens and the blind index of contact data.
	Hasher *auth.Hasher
	// Sealing seals stored secrets: webhook signing secrets and customer
	// contact data.
	Sealing *webhook.Keyring
	// Options signs booking options; nil leaves signing unconfigured
	// (search and confirmation answer 503).
	Options *booking.Keyring
	// Feed signs the providers' calendar feed addresses; nil derives it
	// from Hasher (FeedKey).
	Feed []byte
}

// Vault is the store option sealing contact data with these keys.
func (k Keys) Vault() sqlstore.Option {
	return sqlstore.WithVault(&sqlstore.Vault{Keys: k.Sealing, Index: k.Hasher.Hash})
}

// FeedKey derives the calendar feed key from the token hasher: no further
// secret to configure, and rotating the pepper (which invalidates every
// token anyway) changes every feed address.
func FeedKey(h *auth.Hasher) []byte { return []byte(h.Hash("calendar-feed-key", "v1")) }

// OpenStore opens and migrates the database at url with opts (Keys.Vault
// for a store that seals contact data).
func OpenStore(ctx context.Context, url string, opts ...sqlstore.Option) (*sqlstore.DB, error) {
	db, err := sqlstore.Open(ctx, url, opts...)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Definitions loads what the binary carries: the OpenAPI contract and the
// service catalog.
func Definitions() (*api.Contract, *catalog.Catalog, error) {
	contract, err := api.Load()
	if err != nil {
		return nil, nil, fmt.Errorf("load the OpenAPI contract: %w", err)
	}
	cat, err := catalog.Load()
	if err != nil {
		return nil, nil, fmt.Errorf("load the catalog: %w", err)
	}
	return contract, cat, nil
}

// Base is what every part is built on.
type Base struct {
	Log *slog.Logger
	// Now is the one clock: everything that decides by the time (expiry,
	// due times, retention, rate windows) reads it.
	Now      func() time.Time
	Store    *sqlstore.DB
	Keys     Keys
	Contract *api.Contract
	Catalog  *catalog.Catalog
}

// Options are what a way of running the service varies.
type Options struct {
	// BaseURL is the public address, without a trailing slash.
	BaseURL    string
	Production bool
	// OptionTTL is the lifetime of a booking option (0: the default).
	OptionTTL time.Duration
	// WebhookAllowPrivate lets webhooks target http:// and private
	// addresses (development only).
	WebhookAllowPrivate bool
	// Guard reaches webhook destinations; nil builds one on the system
	// resolver that WebhookAllowPrivate opens to private addresses.
	Guard *webhook.Guard
	// Wake is called after a commit that queued notification jobs (nil
	// when no notification worker runs).
	Wake func()
	// TestClockAdvanced is called after a test owner's clock moved (nil
	// when no worker needs to hear it).
	TestClockAdvanced func()
	// OAuth is the authorization server's configuration; the wiring adds
	// its base URL, store, hasher and logger. Nil: no sender, no limits,
	// Production and the Base clock.
	OAuth *oauth.Config
	// Provider is the provider pages' configuration; the wiring adds its
	// base URL, store, hasher, logger and clock. Nil: no provider pages.
	Provider *provider.PagesConfig
	// CalendarStaleAfter is how long a provider's calendar feed may fail
	// before it is stale (0: calsync.DefaultStaleAfter); the provider pages
	// and API warn by it.
	CalendarStaleAfter time.Duration
	// Operator is the operator console's configuration; the wiring adds
	// its store, hasher, logger, clock, the notification wake and the
	// booking mover, and BaseURL when it has none. Nil: no console.
	Operator *operator.PagesConfig
	// OperatorOwnListener keeps the console off the API's listener: serve
	// serves it alone on --admin-addr (httpapi.Server.AdminHandler).
	OperatorOwnListener bool
	// AccessTokens verifies OAuth access tokens; nil: the authorization
	// server built here, if it is built here.
	AccessTokens auth.AccessTokenVerifier
	// Heartbeats, when set, builds the webhook delivery workers (the outbox
	// relay and the dispatcher), which report to them and to Metrics.
	Heartbeats *telemetry.Heartbeats
	Metrics    *telemetry.Metrics

	// The API listener's settings (httpapi.Config).
	AuthOptional   bool
	LegacySunset   time.Time
	ServeMetrics   bool
	RateLimits     *httpapi.RateLimits
	TrustedProxies []netip.Prefix
}

// UseCases are the services the API and the workers call. Build keeps the
// ones already set (a test's stand-in) and builds the others.
type UseCases struct {
	Search    *booking.Search
	Bookings  *booking.Lifecycle
	Followups *followup.Service
	Feed      *calfeed.Feed
	Webhooks  *webhook.Service
	OAuth     *oauth.Server
	Auth      *auth.Authenticator
	// Credentials is the credential lifecycle (partner and OAuth client
	// rotation, revocation, purge, the operator audit) the console calls.
	Credentials *credentials.Service
	// ProviderPages serves /provider/; built with Options.Provider only.
	ProviderPages *provider.Pages
	// Providers are the provider API's use cases.
	Providers *provider.API
	// OperatorPages serves /operator/; built with Options.Operator only.
	OperatorPages *operator.Pages
	// Relay and Dispatcher deliver webhooks; built with Options.Heartbeats
	// only.
	Relay      *outbox.Relay
	Dispatcher *outbox.Dispatcher
}

// Build builds every use case u lacks, each from those before it.
func (u *UseCases) Build(b Base, o Options) error {
	if err := u.bookings(b, o); err != nil {
		return err
	}
	if u.Feed == nil {
		feed, err := CalendarFeed(b.Keys, b.Store, o.BaseURL, b.Now)
		if err != nil {
			return err
		}
		u.Feed = feed
	}
	if u.Webhooks == nil {
		u.webhooks(b, o)
	}
	if u.Providers == nil {
		u.Providers = provider.NewAPI(sqlstore.Bind[provider.Tx](b.Store), sqlstore.Bind[provider.SupplyTx](b.Store), b.Catalog, b.Now, b.Log)
	}
	if u.Providers.Calendars == nil {
		u.Providers.Calendars = u.calendars(b, o)
	}
	if err := u.providerPages(b, o); err != nil {
		return err
	}
	if u.Credentials == nil {
		u.Credentials = credentials.New(sqlstore.Bind[credentials.Tx](b.Store), b.Keys.Hasher, b.Now)
	}
	if err := u.operatorPages(b, o); err != nil {
		return err
	}
	return u.signIn(b, o)
}

// operatorPages builds the operator console when Options.Operator asks
// for it.
func (u *UseCases) operatorPages(b Base, o Options) error {
	if u.OperatorPages != nil || o.Operator == nil {
		return nil
	}
	c := *o.Operator
	c.Production, c.Store, c.Hasher, c.Logger = o.Production, sqlstore.Bind[operator.Tx](b.Store), b.Keys.Hasher, b.Log
	if c.BaseURL == "" {
		c.BaseURL = o.BaseURL
	}
	if c.Now == nil {
		c.Now = b.Now
	}
	if c.Wake == nil {
		c.Wake = o.Wake
	}
	if c.Mover == nil {
		c.Mover = &operator.Mover{Search: u.Search, Lifecycle: u.Bookings}
	}
	if c.Credentials == nil {
		c.Credentials = u.Credentials
	}
	if c.CalendarStaleAfter == 0 {
		c.CalendarStaleAfter = o.CalendarStaleAfter
	}
	if c.Catalog == nil {
		c.Catalog = b.Catalog
	}
	pages, err := operator.NewPages(c)
	if err != nil {
		return err
	}
	u.OperatorPages = pages
	return nil
}

// providerPages builds the provider pages when Options.Provider asks for
// them.
func (u *UseCases) providerPages(b Base, o Options) error {
	if u.ProviderPages != nil || o.Provider == nil {
		return nil
	}
	c := *o.Provider
	c.BaseURL, c.Production, c.Store, c.Hasher, c.Logger = o.BaseURL, o.Production, sqlstore.Bind[provider.Tx](b.Store), b.Keys.Hasher, b.Log
	if c.Now == nil {
		c.Now = b.Now
	}
	if c.Supply == nil {
		c.Supply = provider.NewSupply(sqlstore.Bind[provider.SupplyTx](b.Store), b.Catalog, c.Now, b.Log)
	}
	if c.Calendars == nil {
		c.Calendars = u.Providers.Calendars
	}
	pages, err := provider.NewPages(c)
	if err != nil {
		return err
	}
	u.ProviderPages = pages
	return nil
}

// calendars builds the provider's calendar subscriptions as the pages and
// the provider API keep them: addresses judged by the webhook guard, the
// provider's own Bokat feed offered for export.
func (u *UseCases) calendars(b Base, o Options) *provider.Calendars {
	guard := o.Guard
	if guard == nil {
		guard = webhook.NewGuard(net.DefaultResolver, o.WebhookAllowPrivate)
	}
	return provider.NewCalendars(provider.CalendarsConfig{Store: sqlstore.Bind[calsync.Tx](b.Store),
		InTx: sqlstore.Bind[provider.CalendarTx](b.Store).InTx, Guard: guard, StaleAfter: o.CalendarStaleAfter,
		ExportURL: u.Feed.URL, Now: b.Now})
}

// CalendarFeed returns the providers' calendar feeds on store, their
// addresses under baseURL signed with the feed key of keys.
func CalendarFeed(keys Keys, store *sqlstore.DB, baseURL string, now func() time.Time) (*calfeed.Feed, error) {
	key := keys.Feed
	if key == nil {
		key = FeedKey(keys.Hasher)
	}
	return calfeed.New(calfeed.Config{Key: key, Store: store, BaseURL: baseURL, Now: now})
}

// bookings builds search, the booking lifecycle on it, and follow-up
// requests.
func (u *UseCases) bookings(b Base, o Options) error {
	var err error
	if u.Search == nil {
		u.Search, err = booking.NewSearch(booking.Config{Catalog: b.Catalog, Store: b.Store, Keys: b.Keys.Options, OptionTTL: o.OptionTTL, Now: b.Now,
			Log: b.Log, Reloaded: o.Metrics.SearchIndexReloaded})
		if err != nil {
			return err
		}
	}
	if u.Bookings == nil {
		if u.Bookings, err = booking.NewLifecycle(booking.LifecycleConfig{Store: sqlstore.Bind[booking.Tx](b.Store), Catalog: b.Catalog, Keys: b.Keys.Options, Now: b.Now, OnQueued: o.Wake}); err != nil {
			return err
		}
	}
	if u.Followups == nil {
		u.Followups = followup.New(sqlstore.Bind[followup.Tx](b.Store), b.Catalog, b.Now, o.Wake)
	}
	return nil
}

// webhooks builds the webhook service the API serves and, with
// Options.Heartbeats, the two loops that deliver: the outbox relay and the
// dispatcher, which the service wakes when it queues a delivery.
func (u *UseCases) webhooks(b Base, o Options) {
	guard := o.Guard
	if guard == nil {
		guard = webhook.NewGuard(net.DefaultResolver, o.WebhookAllowPrivate)
	}
	var kick func()
	if o.Heartbeats != nil {
		sender := webhook.NewSender(webhook.SenderConfig{Guard: guard, Keys: b.Keys.Sealing, Now: b.Now})
		u.Dispatcher = outbox.NewDispatcher(b.Store, sender, outbox.DispatcherConfig{Logger: b.Log.With("worker", "webhook-dispatcher"),
			Heartbeat: o.Heartbeats.Register("webhook-dispatcher", time.Minute), Outcomes: o.Metrics, Now: b.Now})
		u.Relay = outbox.NewRelay(sqlstore.Bind[outbox.Tx](b.Store), outbox.RelayConfig{Logger: b.Log.With("worker", "outbox-relay"),
			OnRelayed: u.Dispatcher.Kick, Heartbeat: o.Heartbeats.Register("outbox-relay", time.Minute), Now: b.Now})
		kick = u.Dispatcher.Kick
	}
	u.Webhooks = webhook.NewService(webhook.ServiceConfig{Store: sqlstore.Bind[webhook.Tx](b.Store), Guard: guard,
		Keys: b.Keys.Sealing, OnQueued: kick, Now: b.Now})
}

// signIn builds the OAuth authorization server and the authenticator of
// partner tokens and OAuth access tokens, both recording the last use of
// the credentials they admit through one recorder (auth.Usage).
func (u *UseCases) signIn(b Base, o Options) error {
	verifier := o.AccessTokens
	usage := auth.NewUsage(b.Store, b.Log)
	if u.OAuth == nil {
		c := oauth.Config{Production: o.Production, Now: b.Now}
		if o.OAuth != nil {
			c = *o.OAuth
		}
		c.BaseURL, c.Store, c.Hasher, c.Logger = o.BaseURL, sqlstore.Bind[oauth.Tx](b.Store), b.Keys.Hasher, b.Log
		if c.Usage == nil {
			c.Usage = usage
		}
		as, err := oauth.New(c)
		if err != nil {
			return err
		}
		u.OAuth = as
		if verifier == nil {
			verifier = as
		}
	}
	if u.Auth == nil {
		u.Auth = auth.NewAuthenticator(b.Keys.Hasher, b.Store, verifier).WithProviderTokens(b.Store).WithClock(b.Now).WithUsage(usage)
	}
	return nil
}

// providerHandler is the provider pages as the API mounts them: nil (no
// pages) when they were not built.
func (u *UseCases) providerHandler() http.Handler {
	if u.ProviderPages == nil {
		return nil
	}
	return u.ProviderPages
}

// operatorHandler is the console as the API mounts it: nil when it was not
// built or has a listener of its own.
func (u *UseCases) operatorHandler(o Options) http.Handler {
	if u.OperatorPages == nil || o.OperatorOwnListener {
		return nil
	}
	return u.OperatorPages
}

// Ops are the operations parts the API reports to and is limited by.
type Ops struct {
	Metrics *telemetry.Metrics
	Health  *telemetry.Health
	Limiter ratelimit.Limiter
}

// Pinger is a store whose reachability readiness checks.
type Pinger interface {
	Ping(ctx context.Context) error
}

// DatabaseCheck is the readiness check of the store.
func DatabaseCheck(store Pinger) telemetry.Check {
	return telemetry.Check{Name: "database", Run: func(ctx context.Context) error {
		if err := store.Ping(ctx); err != nil {
			return telemetry.Failed("unreachable", err)
		}
		return nil
	}}
}

// Complete builds the operations parts o lacks for a process on its own:
// fresh metrics, readiness of the store alone, in-process rate limits.
// (serve builds its own: a schema and a workers check, Redis.)
func (o *Ops) Complete(log *slog.Logger, store Pinger, now func() time.Time) {
	if o.Metrics == nil {
		o.Metrics = telemetry.NewMetrics(now)
	}
	if o.Health == nil {
		o.Health = telemetry.NewHealth(log, DatabaseCheck(store))
	}
	if o.Limiter == nil {
		o.Limiter = ratelimit.NewMemory(ratelimit.MemoryOptions{Now: now})
	}
}

// API builds the HTTP API on the use cases.
func API(b Base, o Options, u *UseCases, ops Ops) (*httpapi.Server, error) {
	return httpapi.New(httpapi.Config{
		BaseURL:      o.BaseURL,
		LegacySunset: o.LegacySunset,
		Production:   o.Production,
		AuthOptional: o.AuthOptional,
		Logger:       b.Log,
		Now:          b.Now,
		Contract:     b.Contract,
		Catalog:      b.Catalog,
		Auth:         u.Auth,
		Store:        b.Store,
		TestMessages: b.Store,
		TestClock:    testClock(b, o),
		Events:       b.Store,
		Followups:    u.Followups,
		Search:       u.Search,
		Bookings:     u.Bookings,
		CalendarFeed: u.Feed,

		Webhooks:            u.Webhooks,
		WebhookAllowPrivate: o.WebhookAllowPrivate,
		OAuth:               u.OAuth,
		ProviderPages:       u.providerHandler(),
		OperatorPages:       u.operatorHandler(o),
		Providers:           u.Providers,

		Metrics:        ops.Metrics,
		ServeMetrics:   o.ServeMetrics,
		Health:         ops.Health,
		RateLimiter:    ops.Limiter,
		RateLimits:     o.RateLimits,
		TrustedProxies: o.TrustedProxies,
	})
}

// testClock returns the test owners' clocks, telling o.TestClockAdvanced
// when one moves.
func testClock(b Base, o Options) *testrealm.Clock {
	c := testrealm.NewClock(b.Store, b.Now)
	c.OnAdvance = o.TestClockAdvanced
	return c
}

// NewHTTPServer returns a server for h with the timeouts and limits of
// every listener of serve: slow or idle clients cannot hold connections
// open.
func NewHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
