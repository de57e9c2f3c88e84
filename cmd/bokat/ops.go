package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/mail"
	"net/netip"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"bokat/internal/calfeed"
	"bokat/internal/httpapi"
	"bokat/internal/notify"
	"bokat/internal/oauth"
	"bokat/internal/ratelimit"
	"bokat/internal/ratelimit/redislimit"
	"bokat/internal/sqlstore"
	"bokat/internal/telemetry"
	"bokat/internal/wire"
)

// opsConfig holds the operations settings of `serve`: rate limits, mail,
// metrics.
type opsConfig struct {
	RateSearch     string
	RateWrites     string
	RateReads      string
	RateControl    string
	Redis          string
	RedisPrefix    string
	TrustedProxies string
	SMTPURL        string
	MailFrom       string
	MailDir        string
	MetricsAddr    string
	MetricsPublic  bool
	// Pprof serves the runtime profiles (net/http/pprof) under /debug/pprof/
	// beside /metrics on MetricsAddr; it requires MetricsAddr, so profiles
	// are never on the API address.
	Pprof bool
	// OAuth budgets (see oauth.Limits), in ParseRate form.
	RateOAuthPages          string
	RateOAuthToken          string
	RateOAuthFailuresIP     string
	RateOAuthFailuresClient string
	RateOAuthRegister       string
	RateSignInIP            string
	RateSignInAddress       string
	RateSignInGlobal        string

	limits      httpapi.RateLimits
	oauthLimits oauth.Limits
	proxies     []netip.Prefix
	// now is the clock of the rate limiter, the heartbeats, the metrics and
	// the mailer: serve sets its one clock (time.Now when unset).
	now func() time.Time
}

const defaultMailFrom = "Bokat <bokning@bokat.localhost>"

func (c *opsConfig) register(fs *flagSet) {
	checkRate := func(s string) error { _, err := ratelimit.ParseRate("", s); return err }
	fs.Text(&c.RateSearch, "rate-search", "BOKAT_RATE_SEARCH", "120/min", "search quota per principal (anonymous: per client IP), e.g. 120/min, 10/10s, off", checkRate)
	fs.Text(&c.RateWrites, "rate-writes", "BOKAT_RATE_WRITES", "30/min", "write quota per principal (confirm, cancel, reschedule, requests, webhooks)", checkRate)
	fs.Text(&c.RateReads, "rate-reads", "BOKAT_RATE_READS", "300/min", "read quota per principal (status, capabilities, other GETs)", checkRate)
	fs.Text(&c.RateControl, "rate-control", "BOKAT_RATE_CONTROL", "600/min", "quota per client IP of what runs no operation: MCP initialize, tools/list, ping; /readyz, /metrics", checkRate)
	fs.Text(&c.Redis, "redis", "BOKAT_REDIS_URL", "", "redis:// URL: share rate limits between instances (default: in-process limits)", checkRedisURL)
	fs.String(&c.RedisPrefix, "redis-prefix", "BOKAT_REDIS_PREFIX", redislimit.DefaultPrefix, "prefix of the rate-limit keys in Redis (instances sharing limits use the same)")
	fs.Text(&c.TrustedProxies, "trusted-proxies", "BOKAT_TRUSTED_PROXIES", "", "comma-separated CIDRs or addresses of proxies whose X-Forwarded-For is believed", func(s string) error {
		_, err := httpapi.ParseTrustedProxies(s)
		return err
	})
	fs.Text(&c.SMTPURL, "smtp-url", "BOKAT_SMTP_URL", "", "smtp://user:pass@host:587 (STARTTLS) or smtps://user:pass@host:465; required in production", func(s string) error {
		if s == "" {
			return nil
		}
		return notify.CheckSMTPURL(s)
	})
	fs.Text(&c.MailFrom, "mail-from", "BOKAT_MAIL_FROM", defaultMailFrom, "sender of customer and provider e-mail; required in production", func(s string) error {
		if _, err := mail.ParseAddress(s); err != nil {
			return fmt.Errorf("%q is not an e-mail address (e.g. Bokat <bokning@example.se>)", s)
		}
		return nil
	})
	fs.String(&c.MailDir, "mail-dir", "BOKAT_MAIL_DIR", "bokat-data/mail", "without --smtp-url (development): write e-mail here as .eml files")
	fs.Text(&c.MetricsAddr, "metrics-addr", "BOKAT_METRICS_ADDR", "", "serve /metrics on this separate address instead of the API address", func(s string) error {
		if s == "" {
			return nil
		}
		return checkListenAddr(s)
	})
	fs.Bool(&c.Pprof, "pprof", "BOKAT_PPROF", false, "serve the runtime profiles (heap, goroutines, CPU) under /debug/pprof/ on --metrics-addr; requires --metrics-addr")
	fs.Bool(&c.MetricsPublic, "metrics-public", "BOKAT_METRICS_PUBLIC", false, "serve /metrics (no credential) on the API address in production too; production requires this or --metrics-addr")
	d := oauth.DefaultLimits()
	fs.Text(&c.RateOAuthPages, "rate-oauth-pages", "BOKAT_RATE_OAUTH_PAGES", rateFlag(d.Pages), "OAuth sign-in and consent page requests per client IP", checkRate)
	fs.Text(&c.RateOAuthToken, "rate-oauth-token", "BOKAT_RATE_OAUTH_TOKEN", rateFlag(d.Token), "/oauth/token and /oauth/revoke requests per authenticated OAuth client", checkRate)
	fs.Text(&c.RateOAuthFailuresIP, "rate-oauth-auth-failures-ip", "BOKAT_RATE_OAUTH_AUTH_FAILURES_IP", rateFlag(d.AuthFailuresIP), "failed OAuth client authentications per client IP; once spent, the address gets 429", checkRate)
	fs.Text(&c.RateOAuthFailuresClient, "rate-oauth-auth-failures-client", "BOKAT_RATE_OAUTH_AUTH_FAILURES_CLIENT", rateFlag(d.AuthFailuresClient), "failed OAuth client authentications per client id; once spent, the client id gets 429", checkRate)
	fs.Text(&c.RateOAuthRegister, "rate-oauth-register", "BOKAT_RATE_OAUTH_REGISTER", rateFlag(d.Register), "dynamic OAuth client registrations (/oauth/register) per client IP", checkRate)
	fs.Text(&c.RateSignInIP, "rate-signin-ip", "BOKAT_RATE_SIGNIN_IP", rateFlag(d.SignInIP), "sign-in codes e-mailed per client IP", checkRate)
	fs.Text(&c.RateSignInAddress, "rate-signin-address", "BOKAT_RATE_SIGNIN_ADDRESS", rateFlag(d.SignInAddress), "sign-in codes e-mailed per (e-mail address, client IP)", checkRate)
	fs.Text(&c.RateSignInGlobal, "rate-signin-global", "BOKAT_RATE_SIGNIN_GLOBAL", rateFlag(d.SignInGlobal), "sign-in codes e-mailed overall (all instances sharing --redis)", checkRate)
}

// checkRedisURL accepts a redis:// or rediss:// URL. Its errors never repeat
// the URL, which may hold a password.
func checkRedisURL(s string) error {
	if s == "" {
		return nil
	}
	if _, err := url.Parse(s); err != nil {
		return errors.New("not a URL (want redis://host:6379/0 or rediss://...)")
	}
	if _, err := redis.ParseURL(s); err != nil {
		return errors.New("want a redis:// or rediss:// URL such as redis://host:6379/0")
	}
	return nil
}

// rateFlag renders a default policy in the form ParseRate reads.
func rateFlag(p ratelimit.Policy) string {
	switch p.Window {
	case time.Minute:
		return fmt.Sprintf("%d/min", p.Quota)
	case time.Hour:
		return fmt.Sprintf("%d/h", p.Quota)
	}
	return p.String()
}

func (c *opsConfig) validate(fs *flagSet, production bool) error {
	// Every policy: the API's route classes (named by class) and the OAuth
	// budgets (keeping their default names).
	c.oauthLimits = oauth.DefaultLimits()
	c.limits.Search.Name, c.limits.Writes.Name, c.limits.Reads.Name, c.limits.Control.Name = "search", "writes", "reads", "control"
	for _, r := range []struct {
		flag, value string
		into        *ratelimit.Policy
	}{
		{"rate-search", c.RateSearch, &c.limits.Search},
		{"rate-writes", c.RateWrites, &c.limits.Writes},
		{"rate-reads", c.RateReads, &c.limits.Reads},
		{"rate-control", c.RateControl, &c.limits.Control},
		{"rate-oauth-pages", c.RateOAuthPages, &c.oauthLimits.Pages},
		{"rate-oauth-token", c.RateOAuthToken, &c.oauthLimits.Token},
		{"rate-oauth-auth-failures-ip", c.RateOAuthFailuresIP, &c.oauthLimits.AuthFailuresIP},
		{"rate-oauth-auth-failures-client", c.RateOAuthFailuresClient, &c.oauthLimits.AuthFailuresClient},
		{"rate-oauth-register", c.RateOAuthRegister, &c.oauthLimits.Register},
		{"rate-signin-ip", c.RateSignInIP, &c.oauthLimits.SignInIP},
		{"rate-signin-address", c.RateSignInAddress, &c.oauthLimits.SignInAddress},
		{"rate-signin-global", c.RateSignInGlobal, &c.oauthLimits.SignInGlobal},
	} {
		p, err := ratelimit.ParseRate(r.into.Name, r.value)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", errUsage, fs.label(r.flag), err)
		}
		*r.into = p
	}
	proxies, err := httpapi.ParseTrustedProxies(c.TrustedProxies)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", errUsage, fs.label("trusted-proxies"), err)
	}
	c.proxies = proxies
	if production {
		if c.SMTPURL == "" {
			return fmt.Errorf("%w: production requires --smtp-url (BOKAT_SMTP_URL): customers and providers must get their confirmations; the .eml folder is for development", errUsage)
		}
		if err := checkProductionSMTPURL(c.SMTPURL); err != nil {
			return fmt.Errorf("%w: %s: %v", errUsage, fs.label("smtp-url"), err)
		}
		if !fs.isSet("mail-from") {
			return fmt.Errorf("%w: production requires --mail-from (BOKAT_MAIL_FROM), an address of your domain", errUsage)
		}
		// /metrics has no credential: production must say where it goes.
		if c.MetricsAddr == "" && !c.MetricsPublic {
			return fmt.Errorf("%w: production requires --metrics-addr (BOKAT_METRICS_ADDR), a private address for /metrics, or --metrics-public (BOKAT_METRICS_PUBLIC) to serve it without a credential on the API address", errUsage)
		}
	}
	if c.Pprof && c.MetricsAddr == "" {
		return fmt.Errorf("%w: --pprof (BOKAT_PPROF) requires --metrics-addr (BOKAT_METRICS_ADDR): the profiles are served only on the private metrics address", errUsage)
	}
	if c.MetricsAddr != "" && c.MetricsPublic {
		return fmt.Errorf("%w: --metrics-addr (BOKAT_METRICS_ADDR) and --metrics-public (BOKAT_METRICS_PUBLIC) exclude each other: /metrics is served on one address", errUsage)
	}
	return nil
}

// checkProductionSMTPURL refuses credentials on a connection that never
// uses TLS (smtp:// with starttls=none): the mailer sends credentials only
// over TLS, so every message would fail to authenticate. Its errors never
// repeat the URL.
func checkProductionSMTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	if u.Scheme == "smtp" && u.User != nil && u.Query().Get("starttls") == "none" {
		return errors.New("credentials with starttls=none can never authenticate (credentials are sent only over TLS): " +
			"use STARTTLS (drop starttls=none) or smtps://, or leave the credentials out for a relay that needs none")
	}
	return nil
}

// metricsOnAPI reports whether the API address serves /metrics: when no
// --metrics-addr is set, in development always, in production only when
// --metrics-public says so.
func (c *opsConfig) metricsOnAPI(production bool) bool {
	return c.MetricsAddr == "" && (c.MetricsPublic || !production)
}

// ops is what `serve` runs for operations beside the API.
type ops struct {
	metrics    *telemetry.Metrics
	heartbeats *telemetry.Heartbeats
	health     *telemetry.Health
	limiter    ratelimit.Peeker
	// Mailer sends notifications and, for the sign-in flow, one-time codes
	// (Mailer.SendSignInCode).
	mailer *notify.Mailer
	// metricsServer serves /metrics on metricsLn (--metrics-addr) when set.
	metricsServer *http.Server
	metricsLn     net.Listener
	closers       []io.Closer
}

// setupOps builds metrics, readiness, the rate limiter and the mailer.
func setupOps(ctx context.Context, c opsConfig, db *sqlstore.DB, log *slog.Logger) (*ops, error) {
	o := &ops{metrics: telemetry.NewMetrics(c.now), heartbeats: telemetry.NewHeartbeats(c.now)}
	o.metrics.WatchBacklog(db, log)
	o.health = telemetry.NewHealth(log,
		telemetry.Check{Name: "database", Run: func(ctx context.Context) error {
			if err := db.Ping(ctx); err != nil {
				return telemetry.Failed("unreachable", err)
			}
			return nil
		}},
		telemetry.Check{Name: "schema", Run: func(ctx context.Context) error {
			if err := db.CheckSchema(ctx, false); err != nil {
				return telemetry.Failed("not current: run bokat migrate with this binary", err)
			}
			return nil
		}},
		telemetry.Check{Name: "workers", Run: o.heartbeats.Check},
	)

	if c.Redis != "" {
		client, err := redislimit.Dial(c.Redis)
		if err != nil {
			return nil, fmt.Errorf("%w: --redis: %v", errUsage, err)
		}
		redis.SetLogger(redislimit.Logger{Log: log})
		o.closers = append(o.closers, client)
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		if err := client.Ping(pctx).Err(); err != nil {
			log.Warn("Redis does not answer; rate limits fail open until it does", "error", err.Error())
		}
		cancel()
		o.limiter = redislimit.New(client, redislimit.Options{Prefix: c.RedisPrefix, Now: c.now})
	} else {
		o.limiter = ratelimit.NewMemory(ratelimit.MemoryOptions{Now: c.now})
	}

	mailer, err := notify.NewMailer(notify.MailerConfig{SMTPURL: c.SMTPURL, From: c.MailFrom, Dir: c.MailDir, Logger: log, Now: c.now})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%w: %v", errUsage, err), o.close())
	}
	o.mailer = mailer

	if c.MetricsAddr != "" {
		ln, err := net.Listen("tcp", c.MetricsAddr)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("listen on --metrics-addr %s: %w", c.MetricsAddr, err), o.close())
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", o.metrics.Handler(log))
		if c.Pprof {
			mux.HandleFunc("GET /debug/pprof/", pprof.Index)
			mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
			mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		}
		o.metricsLn = ln
		o.closers = append(o.closers, ln)
		o.metricsServer = wire.NewHTTPServer(mux, log)
	}
	return o, nil
}

// notificationWorker returns the background loop delivering notification
// jobs: customer and provider messages about bookings (bookings gives what
// they say) and follow-up requests handed to providers (requests). followUp
// raises booking.provider_action_required when a provider message fails for
// good. Invitation UIDs are qualified by the host of baseURL, as the
// provider calendar feed's are. wake wakes the worker once jobs were
// committed; otherwise it looks again after poll (its default when zero,
// always outside tests).
func (o *ops) notificationWorker(db *sqlstore.DB, log *slog.Logger, baseURL string, bookings notify.BookingSource,
	requests notify.RequestSource, followUp notify.ProviderFollowUp, wake *notify.Waker, now func() time.Time, poll time.Duration) (worker, error) {
	uidDomain, err := calfeed.UIDDomain(baseURL)
	if err != nil {
		return worker{}, err
	}
	hb := o.heartbeats.Register("notify", 2*time.Minute)
	w, err := notify.NewWorker(notify.WorkerConfig{
		Store: sqlstore.Bind[notify.Tx](db), Bookings: bookings, Requests: requests, FollowUp: followUp, Sender: o.mailer, Capture: db, Organizer: o.mailer.FromAddress(),
		UIDDomain: uidDomain, Logger: log.With("worker", "notify"), Outcomes: o.metrics, Heartbeat: hb, Waker: wake, Now: now, Poll: poll,
	})
	if err != nil {
		return worker{}, err
	}
	return worker{name: "notify", run: w.Run}, nil
}

// close closes the Redis client and the metrics listener (unless its server
// closed it already).
func (o *ops) close() error {
	var errs []error
	for _, c := range o.closers {
		if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
