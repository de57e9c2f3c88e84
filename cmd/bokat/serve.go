package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"bokat"
	"bokat/api"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/followup"
	"bokat/internal/httpapi"
	"bokat/internal/notify"
	"bokat/internal/oauth"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
	"bokat/internal/webhook"
)

type serveConfig struct {
	commonConfig
	opsConfig
	retentionConfig
	Addr            string
	BaseURL         string
	Demo            bool
	AuthOptional    bool
	ShutdownTimeout time.Duration
	// OptionSigningKeys are "kid:base64key,..." (first signs, all verify);
	// generated once and kept in the database in development.
	OptionSigningKeys string
	OptionTTL         time.Duration
	// SecretKey seals stored secrets: base64 AES-256 keys, comma-separated,
	// the first sealing (rotation). Required in production.
	SecretKey           string
	WebhookAllowPrivate bool
	// LegacySunset is the announced removal date of the deprecated paths
	// ("" for none), as accepted by parseSunset.
	LegacySunset string
}

func (c *serveConfig) register(fs *flagSet) {
	c.commonConfig.register(fs)
	c.retentionConfig.register(fs)
	fs.Text(&c.Addr, "addr", "BOKAT_ADDR", "127.0.0.1:8080", "listen address", checkListenAddr)
	fs.Text(&c.BaseURL, "base-url", "BOKAT_BASE_URL", "", "public base URL (default http://<addr>)", checkBaseURL)
	fs.Bool(&c.Demo, "demo", "BOKAT_DEMO", false, "seed the demo supply and print a development partner token with every scope (development only)")
	fs.Bool(&c.AuthOptional, "auth-optional", "BOKAT_AUTH_OPTIONAL", false, "admit requests without a credential (development only)")
	fs.Duration(&c.ShutdownTimeout, "shutdown-timeout", "BOKAT_SHUTDOWN_TIMEOUT", 15*time.Second, "how long to drain requests on shutdown")
	fs.Text(&c.OptionSigningKeys, "option-signing-keys", "BOKAT_OPTION_SIGNING_KEYS", "",
		`booking option signing keys "kid:base64key,kid:base64key" (first signs, all verify; >= 32 bytes each); generated in development`,
		func(s string) error {
			if s == "" {
				return nil
			}
			_, err := booking.ParseKeyring(s)
			return err
		})
	fs.DurationIn(&c.OptionTTL, "option-ttl", "BOKAT_OPTION_TTL", booking.DefaultOptionTTL, time.Second, 24*time.Hour,
		"lifetime of a booking option, 1m to 24h (down to 1s in development, to exercise expiry)")
	fs.Text(&c.SecretKey, "secret-key", "BOKAT_SECRET_KEY", "", "base64 key (32 bytes) sealing stored secrets and customer contact data; comma-separated to rotate, the first seals; required in production",
		func(s string) error {
			if s == "" {
				return nil
			}
			_, err := parseSecretKeys(s)
			return err
		})
	fs.Bool(&c.WebhookAllowPrivate, "webhook-allow-private", "BOKAT_WEBHOOK_ALLOW_PRIVATE", false, "let webhooks target http:// and private or loopback addresses (development only)")
	fs.Text(&c.LegacySunset, "legacy-sunset", "BOKAT_LEGACY_SUNSET", "",
		"removal date of the deprecated /api/public paths, YYYY-MM-DD (midnight UTC) or RFC 3339; sent as the Sunset header on every response of theirs",
		func(s string) error {
			_, err := parseSunset(s)
			return err
		})
	c.opsConfig.register(fs)
}

// productionMinOptionTTL is the shortest option lifetime production takes:
// an assistant needs time to show an option and ask for consent.
const productionMinOptionTTL = time.Minute

func (c *serveConfig) validate(fs *flagSet) error {
	if err := c.commonConfig.validate(); err != nil {
		return err
	}
	if c.production() {
		// The settings production refuses when turned on.
		var bad []string
		for _, s := range []struct {
			name string
			on   bool
		}{{"demo", c.Demo}, {"auth-optional", c.AuthOptional}, {"webhook-allow-private", c.WebhookAllowPrivate}} {
			if s.on {
				bad = append(bad, fs.label(s.name))
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%w: %s is development only and refused in production", errUsage, strings.Join(bad, ", "))
		}
		if c.OptionTTL < productionMinOptionTTL {
			return fmt.Errorf("%w: %s: must be at least %s in production (shorter lifetimes are development only), got %s",
				errUsage, fs.label("option-ttl"), productionMinOptionTTL, c.OptionTTL)
		}
		if c.BaseURL == "" {
			return fmt.Errorf("%w: production requires --base-url (BOKAT_BASE_URL)", errUsage)
		}
		if err := checkProductionBaseURL(c.BaseURL); err != nil {
			return fmt.Errorf("%w: %s: %v", errUsage, fs.label("base-url"), err)
		}
		if c.SecretKey == "" {
			return fmt.Errorf("production requires BOKAT_SECRET_KEY (--secret-key): a base64 key of 32 bytes sealing stored secrets; secrets are never generated in production")
		}
	}
	return c.opsConfig.validate(fs, c.production())
}

// parseSunset reads a --legacy-sunset value: a date (YYYY-MM-DD, taken as
// midnight UTC) or an RFC 3339 instant. "" is the zero time: no sunset.
func parseSunset(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date (write it like 2027-06-30 or 2027-06-30T00:00:00Z)", s)
}

// checkListenAddr accepts host:port (the host may be empty: every
// interface).
func checkListenAddr(s string) error {
	if _, _, err := net.SplitHostPort(s); err != nil {
		return fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:8080)", s)
	}
	return nil
}

// checkBaseURL accepts an absolute http(s) URL, or nothing (the default is
// derived from --addr).
func checkBaseURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return fmt.Errorf("must be an absolute http(s) URL such as https://api.example.se, got %q", raw)
	}
	return nil
}

// checkProductionBaseURL requires the public address of a production server
// to be https (sign-in cookies are Secure only there, and OAuth redirects and
// webhook links name it); plain http is accepted only for a loopback host,
// where no traffic leaves the machine. raw has passed checkBaseURL.
func checkProductionBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); (err == nil && ip.IsLoopback()) || host == "localhost" {
		return nil
	}
	return fmt.Errorf("production requires an https --base-url (http only on a loopback address), got %q", raw)
}

// runServe runs the API until ctx is done, then shuts down in order: stop
// accepting and drain HTTP, stop the workers, close the store.
func runServe(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("serve", e)
	var c serveConfig
	c.register(fs)
	if _, err := fs.parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := c.validate(fs); err != nil {
		return err
	}
	log, err := newLogger(e.stderr, c.LogLevel)
	if err != nil {
		return err
	}

	contract, err := api.Load()
	if err != nil {
		return fmt.Errorf("load the OpenAPI contract: %w", err)
	}
	cat, err := catalog.Load()
	if err != nil {
		return fmt.Errorf("load the catalog: %w", err)
	}
	db, err := openStore(ctx, c.commonConfig)
	if err != nil {
		return err
	}
	defer db.Close()
	hasher, err := tokenHasher(ctx, c.commonConfig, db)
	if err != nil {
		return err
	}
	if err := setupVault(ctx, c, db, hasher); err != nil {
		return err
	}
	authn := auth.NewAuthenticator(hasher, db, nil)
	if c.production() {
		// Announced once here; the 503s it causes are not logged per call.
		if n, err := db.PartnerClientCount(ctx); err == nil && n == 0 {
			log.Warn("no partner credential exists yet (bokat partner create): partner-only routes answer 503 production_token_not_configured")
		}
	}
	keys, err := optionKeyring(ctx, c, db)
	if err != nil {
		return err
	}
	if keys == nil {
		log.Warn("no option signing keys configured (BOKAT_OPTION_SIGNING_KEYS): search and confirmation answer 503 option_signing_not_configured")
	}
	search, err := booking.NewSearch(booking.Config{Catalog: cat, Store: db, Keys: keys, OptionTTL: c.OptionTTL})
	if err != nil {
		return err
	}
	if c.Demo {
		res, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat, supply.DemoName, supply.Demo(), time.Now())
		if err != nil {
			return fmt.Errorf("demo supply: %w", err)
		}
		log.Info("demo supply loaded", "result", res.String())
	}
	go func() { // the first searches wait for it rather than each reading the calendar
		if err := search.Warm(ctx); err != nil && ctx.Err() == nil {
			log.Warn("building the search index failed; the first search retries", "error", err)
		}
	}()
	op, err := setupOps(ctx, c.opsConfig, db, log)
	if err != nil {
		return err
	}
	defer op.close()
	op.requests = followup.New(db, cat, nil, nil)
	// The writes that queue notification jobs wake the notification worker
	// after they commit, rather than leaving the jobs to its next poll.
	notifyWake := notify.NewWaker()
	webhooks, webhookWorkers, err := setupWebhooks(ctx, c, db, log, op.heartbeats, op.metrics)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	defer ln.Close()
	baseURL := c.BaseURL
	if baseURL == "" {
		baseURL = "http://" + ln.Addr().String()
	}

	// OAuth 2 for delegated users. Sign-in codes go out through the same
	// mailer as booking notifications (SMTP, or .eml files in development,
	// where the code is also logged).
	var codeSender oauth.CodeSender = op.mailer
	oauthServer, err := oauth.New(oauth.Config{
		BaseURL:    baseURL,
		Production: c.production(),
		Store:      sqlstore.Bind[oauth.Tx](db),
		Hasher:     hasher,
		Sender:     codeSender,
		Logger:     log,
		Limiter:    op.limiter,
		Limits:     &c.oauthLimits,
		Metrics:    op.metrics,
		// Client ID Metadata Documents are fetched through the webhooks'
		// SSRF guard (public https destinations on port 443 only, unless
		// --webhook-allow-private in development).
		DocumentGuard: webhook.NewGuard(net.DefaultResolver, c.WebhookAllowPrivate),
	})
	if err != nil {
		return err
	}
	authn.SetAccessTokenVerifier(oauthServer)
	bookings, err := booking.NewLifecycle(db, search, notifyWake.Wake)
	if err != nil {
		return err
	}
	feed, err := calendarFeed(ctx, c.commonConfig, db, baseURL)
	if err != nil {
		return err
	}

	legacySunset, err := parseSunset(c.LegacySunset) // checked when parsed
	if err != nil {
		return err
	}
	srv, err := httpapi.New(httpapi.Config{
		BaseURL:      baseURL,
		LegacySunset: legacySunset,
		Production:   c.production(),
		AuthOptional: c.AuthOptional,
		Logger:       log,
		Contract:     contract,
		Catalog:      cat,
		Auth:         authn,
		Store:        db,
		Followups:    followup.New(db, cat, nil, notifyWake.Wake),
		Search:       search,

		Webhooks:            webhooks,
		WebhookAllowPrivate: c.WebhookAllowPrivate,
		OAuth:               oauthServer,

		Metrics:        op.metrics,
		ServeMetrics:   c.metricsOnAPI(c.production()),
		Health:         op.health,
		RateLimiter:    op.limiter,
		RateLimits:     &c.limits,
		TrustedProxies: c.proxies,
		Bookings:       bookings,
		CalendarFeed:   feed,
	})
	if err != nil {
		return err
	}

	if c.Demo {
		token, err := demoPartner(ctx, db, authn)
		if err != nil {
			return fmt.Errorf("demo partner: %w", err)
		}
		fmt.Fprintf(e.stdout, "Development partner token (every scope): %s\n", token)
	}
	fmt.Fprintf(e.stdout, "bokat listening on %s (store: %s, env: %s)\n", baseURL, db.Engine(), c.Env)
	if op.metricsLn != nil {
		fmt.Fprintf(e.stdout, "metrics on http://%s/metrics\n", op.metricsLn.Addr())
	}
	op.serveMetrics(log)

	// Background loops beside HTTP; each stops when workerCtx ends.
	var background []worker
	background = append(background, webhookWorkers...)
	background = append(background, worker{name: "oauth-purge", run: func(ctx context.Context) error {
		return oauthServer.RunPurge(ctx, time.Hour)
	}}, resealWorker(db, log, time.Hour), retentionWorker(db, log, time.Now, c.retentionConfig, c.devMailDir(), time.Hour))
	// Customer and provider messages about bookings (and follow-up requests).
	if w, err := op.notificationWorker(db, log, baseURL, bookingSource{db: db, baseURL: baseURL}, providerFollowUp{bookings}, notifyWake); err != nil {
		return err
	} else if w != nil {
		background = append(background, *w)
	}

	var workers sync.WaitGroup
	workerCtx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWorkers()
	for _, w := range background {
		workers.Add(1)
		go func() {
			defer workers.Done()
			if err := w.run(workerCtx); err != nil && !errors.Is(err, context.Canceled) {
				log.Error("worker stopped", "worker", w.name, "error", err.Error())
			}
		}()
	}

	httpServer := newHTTPServer(srv.Handler(), log)
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpServer.Serve(ln) }()

	select {
	case err := <-serveErr:
		stopWorkers()
		workers.Wait()
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: draining HTTP")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		log.Warn("HTTP drain incomplete", "error", err.Error())
	}
	op.shutdownMetrics(shutdownCtx)
	log.Info("shutting down: stopping workers")
	stopWorkers()
	workers.Wait()
	log.Info("shutting down: closing the store")
	return nil
}

// worker is a background loop of the serve process.
type worker struct {
	name string
	run  func(ctx context.Context) error
}

// demoPartner returns the stable development partner token (every scope),
// creating its client on first use.
func demoPartner(ctx context.Context, db *sqlstore.DB, authn *auth.Authenticator) (string, error) {
	token, err := db.DevelopmentSecret(ctx, "demo_partner_token", func() (string, error) {
		return auth.NewSecret(auth.PartnerTokenPrefix), nil
	})
	if err != nil {
		return "", err
	}
	return token, authn.EnsurePartner(ctx, "pc_demo", "Development partner (demo)", token, bokat.AllScopes(), time.Now())
}
