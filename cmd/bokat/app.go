package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/notify"
	"bokat/internal/oauth"
	"bokat/internal/operator"
	"bokat/internal/privacy"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
	"bokat/internal/telemetry"
	"bokat/internal/testrealm"
	"bokat/internal/webhook"
	"bokat/internal/wire"
)

// app is the serve process: the API and the metrics listener, the
// background workers, and the store under them. newApp builds every part,
// each from parts built before it; Run serves until its context ends; Close
// releases what newApp acquired.
type app struct {
	log             *slog.Logger
	stdout          io.Writer
	env             string
	shutdownTimeout time.Duration

	db      *sqlstore.DB
	op      *ops
	ln      net.Listener // the API's
	baseURL string
	// adminLn and admin serve the operator console alone (--admin-addr);
	// adminURL is its origin. Nil without --admin-addr.
	adminLn  net.Listener
	admin    *http.Server
	adminURL string
	search   *booking.Search
	http     *http.Server
	workers  []worker
	// demoToken is the development partner token of --demo ("" without).
	demoToken string
	// testWake wakes the test realm's cancellations and retention when a
	// test clock moved.
	testWake [2]*testrealm.Waker
}

// worker is a background loop of the serve process.
type worker struct {
	name string
	run  func(ctx context.Context) error
}

// newApp builds the serve process of c, step by step: the store with its
// keys, the clock and the catalog (openBase); operations; the listener;
// the use cases; the API; the workers. On an error it releases what it had
// acquired.
func newApp(ctx context.Context, c serveConfig, e env) (_ *app, err error) {
	log, err := newLogger(e.stderr, c.LogLevel)
	if err != nil {
		return nil, err
	}
	a := &app{log: log, stdout: e.stdout, env: c.Env, shutdownTimeout: c.ShutdownTimeout}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.release())
		}
	}()
	// The one clock of the process: everything that decides by the time
	// (expiry, due times, retention, rate windows) reads it.
	c.opsConfig.now = e.now
	b, err := a.openBase(ctx, c, e.now)
	if err != nil {
		return nil, err
	}
	if a.op, err = setupOps(ctx, c.opsConfig, b.Store, log); err != nil {
		return nil, err
	}
	if err := a.listen(c); err != nil {
		return nil, err
	}
	// The writes that queue notification jobs (bookings, follow-up requests)
	// wake the notification worker after they commit, rather than leaving
	// the jobs to its next poll.
	notifyWake := notify.NewWaker()
	o, err := a.options(c, e.now, notifyWake)
	if err != nil {
		return nil, err
	}
	// A test clock that moved wakes what may have become due on it: the
	// test realm's cancellations and retention, and the dispatcher and the
	// notification worker, whose deliveries and jobs the move made due
	// earlier.
	var uc wire.UseCases
	a.testWake = [2]*testrealm.Waker{testrealm.NewWaker(), testrealm.NewWaker()}
	o.TestClockAdvanced = func() {
		a.testWake[0].Wake()
		a.testWake[1].Wake()
		notifyWake.Wake()
		if uc.Dispatcher != nil {
			uc.Dispatcher.Kick()
		}
	}
	if err := uc.Build(b, o); err != nil {
		return nil, err
	}
	a.search = uc.Search
	a.op.health.Add(telemetry.Check{Name: "search_index", Run: func(context.Context) error {
		if !a.search.Warmed() {
			return telemetry.Failed("warming up", nil)
		}
		return nil
	}})
	if err := a.serveAPI(ctx, b, o, &uc, c.Demo); err != nil {
		return nil, err
	}
	if a.workers, err = a.newWorkers(b, c, &uc, notifyWake, e.hooks); err != nil {
		return nil, err
	}
	return a, nil
}

// openBase loads the definitions and opens the store with its keys: what
// every other part is built on. With --demo it loads the demo supply.
func (a *app) openBase(ctx context.Context, c serveConfig, now func() time.Time) (wire.Base, error) {
	contract, cat, err := wire.Definitions()
	if err != nil {
		return wire.Base{}, err
	}
	db, hasher, sealing, err := openSealedStore(ctx, c.commonConfig, c.SecretKey)
	if err != nil {
		return wire.Base{}, err
	}
	a.db = db
	if c.production() {
		// Announced once here; the 503s it causes are not logged per call.
		if n, err := db.PartnerClientCount(ctx); err == nil && n == 0 {
			a.log.Warn("no partner credential exists yet (bokat partner create): partner-only routes answer 503 production_token_not_configured")
		}
	}
	keys, err := optionKeyring(ctx, c, db)
	if err != nil {
		return wire.Base{}, err
	}
	if keys == nil {
		a.log.Warn("no option signing keys configured (BOKAT_OPTION_SIGNING_KEYS): search and confirmation answer 503 option_signing_not_configured")
	}
	if c.Demo {
		res, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat, supply.DemoName, supply.Demo(), now())
		if err != nil {
			return wire.Base{}, fmt.Errorf("demo supply: %w", err)
		}
		a.log.Info("demo supply loaded", "result", res.String())
	}
	// Every server has the test realm's magic providers, for test credentials.
	if res, err := testrealm.Seed(ctx, sqlstore.Bind[supply.Tx](db), cat, now()); err != nil {
		return wire.Base{}, err
	} else if res.Changed() {
		a.log.Info("test realm supply seeded", "result", res.String())
	}
	return wire.Base{Log: a.log, Now: now, Store: db, Keys: wire.Keys{Hasher: hasher, Sealing: sealing, Options: keys},
		Contract: contract, Catalog: cat}, nil
}

// listen opens the API listener; the base URL defaults to its address.
func (a *app) listen(c serveConfig) error {
	var err error
	if a.ln, err = net.Listen("tcp", c.Addr); err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	a.baseURL = c.BaseURL
	if a.baseURL == "" {
		a.baseURL = "http://" + a.ln.Addr().String()
	}
	if c.AdminAddr != "" {
		if a.adminLn, err = net.Listen("tcp", c.AdminAddr); err != nil {
			return fmt.Errorf("listen on %s: %w", c.AdminAddr, err)
		}
		a.adminURL = c.AdminBaseURL
		if a.adminURL == "" {
			a.adminURL = "http://" + a.adminLn.Addr().String()
		}
	}
	return nil
}

// options are serve's settings of the wiring, on the operations parts.
func (a *app) options(c serveConfig, now func() time.Time, wake *notify.Waker) (wire.Options, error) {
	legacySunset, err := parseSunset(c.LegacySunset) // checked when parsed
	if err != nil {
		return wire.Options{}, err
	}
	// Webhook destinations and Client ID Metadata Documents are reached
	// through one SSRF guard (public https destinations on port 443 only,
	// unless --webhook-allow-private in development).
	guard := webhook.NewGuard(net.DefaultResolver, c.WebhookAllowPrivate)
	return wire.Options{
		BaseURL: a.baseURL, Production: c.production(), OptionTTL: c.OptionTTL,
		WebhookAllowPrivate: c.WebhookAllowPrivate, Guard: guard, Wake: wake.Wake,
		// OAuth 2 for delegated users. Sign-in codes go out through the same
		// mailer as booking notifications (SMTP, or .eml files in
		// development, where the code is also logged).
		OAuth: &oauth.Config{Production: c.production(), Sender: a.op.mailer, Now: now, Limiter: a.op.limiter,
			Limits: &c.oauthLimits, Metrics: a.op.metrics, DocumentGuard: guard},
		// The provider pages sign in by the same codes, through the same mailer.
		Provider: &provider.PagesConfig{Sender: a.op.mailer, Mail: a.op.mailer, Now: now, Limiter: a.op.limiter,
			Limits: provider.DefaultLimits()},
		// The operator console signs in the same way; with --admin-addr it
		// is served on that listener only.
		Operator: &operator.PagesConfig{BaseURL: a.adminURL, Sender: a.op.mailer, Now: now, Limiter: a.op.limiter,
			Limits: operator.DefaultLimits()},
		OperatorOwnListener: a.adminLn != nil,
		Heartbeats:          a.op.heartbeats, Metrics: a.op.metrics, CalendarStaleAfter: c.CalendarStaleAfter,
		AuthOptional: c.AuthOptional, LegacySunset: legacySunset, ServeMetrics: c.metricsOnAPI(c.production()),
		RateLimits: &c.limits, TrustedProxies: c.proxies,
	}, nil
}

// serveAPI builds the API server on the use cases, and with --demo the
// development partner.
func (a *app) serveAPI(ctx context.Context, b wire.Base, o wire.Options, uc *wire.UseCases, demo bool) error {
	srv, err := wire.API(b, o, uc, wire.Ops{Metrics: a.op.metrics, Health: a.op.health, Limiter: a.op.limiter})
	if err != nil {
		return err
	}
	a.http = wire.NewHTTPServer(srv.Handler(), a.log)
	if a.adminLn != nil {
		a.admin = wire.NewHTTPServer(srv.AdminHandler(operator.Prefix, uc.OperatorPages), a.log)
	}
	if demo {
		if a.demoToken, err = demoPartner(ctx, b.Store, uc.Auth, b.Now()); err != nil {
			return fmt.Errorf("demo partner: %w", err)
		}
	}
	return nil
}

// newWorkers returns the background loops beside HTTP: calendar sync,
// webhook delivery, the OAuth purge, contact re-sealing and retention, and
// the notifications
// (customer and provider messages about bookings, and follow-up requests
// handed to providers).
func (a *app) newWorkers(b wire.Base, c serveConfig, uc *wire.UseCases, wake *notify.Waker, h hooks) ([]worker, error) {
	notifications, err := a.op.notificationWorker(b.Store, a.log, a.baseURL, bookingSource{db: b.Store, baseURL: a.baseURL},
		uc.Followups, providerFollowUp{uc.Bookings}, wake, b.Now, h.notifyPoll)
	if err != nil {
		return nil, err
	}
	calendars, err := calendarSyncWorker(b, c, uc, a.op, a.log, a.baseURL, h.calendarTick)
	if err != nil {
		return nil, err
	}
	return []worker{
		calendars,
		{name: "outbox-relay", run: uc.Relay.Run},
		{name: "webhook-dispatcher", run: uc.Dispatcher.Run},
		{name: "oauth-purge", run: func(ctx context.Context) error { return uc.OAuth.RunPurge(ctx, time.Hour) }},
		dynamicClientPurgeWorker(uc.Credentials, c.PurgeDynamicClients, a.log, time.Hour),
		resealWorker(b.Store, a.log, time.Hour),
		retentionWorker(b.Store, a.log, b.Now, c.retentionConfig, c.devMailDir(), time.Hour),
		notifications,
		{name: "test-realm-cancels", run: func(ctx context.Context) error {
			return testrealm.NewCanceller(sqlstore.Bind[booking.Tx](b.Store), b.Store, b.Now, a.log).Run(ctx, time.Minute, a.testWake[0])
		}},
		{name: "test-realm-retention", run: func(ctx context.Context) error {
			return testrealm.NewRetention(b.Store, privacy.Retention{Bookings: c.RetainBookings, Requests: c.RetainRequests}, b.Now, a.log).
				Run(ctx, time.Minute, a.testWake[1])
		}},
	}, nil
}

// Run serves the API (and /metrics on its own listener) and runs the
// background workers until ctx is done or the API listener fails. Then it
// drains HTTP within the shutdown timeout, stops the workers and returns:
// the listener's failure, or nil.
func (a *app) Run(ctx context.Context) error {
	if a.demoToken != "" {
		fmt.Fprintf(a.stdout, "Development partner token (every scope): %s\n", a.demoToken)
	}
	if a.admin != nil {
		a.log.Info("operator console listening", "url", a.adminURL+operator.Prefix+"/")
		fmt.Fprintf(a.stdout, "operator console on %s%s/\n", a.adminURL, operator.Prefix)
	}
	fmt.Fprintf(a.stdout, "bokat listening on %s (store: %s, env: %s)\n", a.baseURL, a.db.Engine(), a.env)
	if a.op.metricsLn != nil {
		fmt.Fprintf(a.stdout, "metrics on http://%s/metrics\n", a.op.metricsLn.Addr())
	}

	// Only the API listener's failure ends the group early. A worker (or
	// the metrics listener) that stops is logged and the API serves on:
	// readiness reports a worker whose heartbeat is missing.
	g, gctx := errgroup.WithContext(ctx)
	workerCtx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWorkers()
	for _, w := range a.workers {
		g.Go(func() error {
			if err := w.run(workerCtx); err != nil && !errors.Is(err, context.Canceled) {
				a.log.Error("worker stopped", "worker", w.name, "error", err.Error())
			}
			return nil
		})
	}
	g.Go(func() error { // the first searches wait for it rather than each reading the calendar
		start := time.Now()
		if err := a.search.Warm(gctx); err != nil {
			if gctx.Err() == nil {
				a.log.Warn("building the search index failed; the first search retries", "error", err)
			}
			return nil
		}
		d := time.Since(start)
		a.op.metrics.SearchIndexWarm(d)
		a.log.Info("search index built", "duration_ms", d.Milliseconds())
		return nil
	})
	if a.op.metricsServer != nil {
		g.Go(func() error {
			if err := a.op.metricsServer.Serve(a.op.metricsLn); !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("metrics listener stopped", "error", err.Error())
			}
			return nil
		})
	}
	if a.admin != nil {
		g.Go(func() error {
			if err := a.admin.Serve(a.adminLn); !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("operator console listener stopped", "error", err.Error())
			}
			return nil
		})
	}
	g.Go(func() error {
		if err := a.http.Serve(a.ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http server: %w", err)
		}
		return nil
	})
	var shutdownErr error
	g.Go(func() error {
		<-gctx.Done()
		shutdownErr = a.shutdown(stopWorkers)
		return nil
	})
	return errors.Join(g.Wait(), shutdownErr)
}

// shutdown drains the HTTP listeners within the shutdown timeout, then
// stops the workers. Requests still running at the timeout are cut, as
// --shutdown-timeout says: a warning, not an error.
func (a *app) shutdown(stopWorkers func()) error {
	a.log.Info("shutting down: draining HTTP")
	ctx, cancel := context.WithTimeout(context.Background(), a.shutdownTimeout)
	defer cancel()
	var errs []error
	servers := []*http.Server{a.http}
	if a.admin != nil {
		servers = append(servers, a.admin)
	}
	if a.op.metricsServer != nil {
		servers = append(servers, a.op.metricsServer)
	}
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
			a.log.Warn("HTTP drain incomplete", "error", err.Error())
		} else if err != nil {
			errs = append(errs, fmt.Errorf("drain HTTP: %w", err))
		}
	}
	a.log.Info("shutting down: stopping workers")
	stopWorkers()
	return errors.Join(errs...)
}

// Close is the last step of the shutdown, after Run returned: it closes
// the listeners Run did not serve, the Redis client and the store, in that
// order, and returns every error met, joined.
func (a *app) Close() error {
	a.log.Info("shutting down: closing the store")
	return a.release()
}

// release closes what newApp acquired, as far as it got.
func (a *app) release() error {
	var errs []error
	if a.ln != nil {
		// Once served, the server closed it.
		if err := a.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if a.adminLn != nil {
		if err := a.adminLn.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if a.op != nil {
		errs = append(errs, a.op.close())
	}
	if a.db != nil {
		errs = append(errs, a.db.Close())
	}
	return errors.Join(errs...)
}

// demoPartner returns the stable development partner token (every scope),
// creating its client on first use.
func demoPartner(ctx context.Context, db *sqlstore.DB, authn *auth.Authenticator, now time.Time) (string, error) {
	token, err := db.DevelopmentSecret(ctx, "demo_partner_token", func() (string, error) {
		return auth.NewSecret(auth.PartnerTokenPrefix), nil
	})
	if err != nil {
		return "", err
	}
	return token, authn.EnsurePartner(ctx, "pc_demo", "Development partner (demo)", token, bokat.AllScopes(), now)
}
