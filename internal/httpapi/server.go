// Package httpapi is Bokat's HTTP surface: one route table, the middleware
// every request passes (metadata, tracing, recovery, authentication, scope
// checks, body limits), strict JSON decoding validated against the OpenAPI
// contract, Problem errors, and the wire types converted to and from the
// domain types. Deprecated /api/public paths share the v1 handlers and differ
// only in their error shape and deprecation headers.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/calfeed"
	"bokat/internal/catalog"
	"bokat/internal/followup"
	"bokat/internal/mcp"
	"bokat/internal/provider"
	"bokat/internal/ratelimit"
	"bokat/internal/telemetry"
	"bokat/internal/testrealm"
)

// Contract is the OpenAPI document as the server uses it.
type Contract interface {
	JSON() []byte
	// ValidateRequest returns the issues of a request body, or nil.
	ValidateRequest(ctx context.Context, r *http.Request, body []byte) ([]string, error)
	// mcp.Contract derives the MCP tools' schemas from the document.
	mcp.Contract
}

// Store is what the HTTP layer needs of the store directly.
type Store interface {
	Ping(ctx context.Context) error
	PartnerClientCount(ctx context.Context) (int, error)
}

// Config holds the server's dependencies and settings. Every dependency is
// required (serve provides each one; tests pass real ones); the settings
// have defaults.
type Config struct {
	// BaseURL is the public address of the service, without a trailing slash.
	BaseURL string
	// Production disables every development convenience.
	Production bool
	// LegacySunset, when set, is announced as the removal date of the
	// deprecated /api/public paths: every response on them carries it as an
	// RFC 8594 Sunset header.
	LegacySunset time.Time
	// AuthOptional admits callers without a credential as a development
	// principal (development only).
	AuthOptional bool
	Logger       *slog.Logger
	// Now is the clock.
	Now      func() time.Time
	Contract Contract
	Catalog  *catalog.Catalog
	Auth     *auth.Authenticator
	Store    Store
	// TestMessages reads the messages captured for test credentials
	// (GET /v1/test/messages).
	TestMessages TestMessages
	// TestClock keeps the test owners' clocks (/v1/test/clock); nil
	// means the route answers 503 and test requests take the server's now.
	TestClock *testrealm.Clock
	// Events reads the callers' events (GET /v1/events).
	Events Events
	// Followups creates provider follow-up requests.
	Followups *followup.Service
	// Search serves booking option search.
	Search *booking.Search
	// Webhooks serves the webhook endpoints and replay operations.
	Webhooks Webhooks
	// WebhookAllowPrivate lets registrations name http:// destinations
	// (development only; the Webhooks service's guard decides the rest).
	WebhookAllowPrivate bool
	// OAuth is the authorization server whose endpoints (/oauth/*,
	// /.well-known/oauth-authorization-server) are served.
	OAuth AuthorizationServer
	// ProviderPages, when set, serves the provider pages under /provider/
	// (package provider): HTML with sessions of their own, no credential.
	ProviderPages http.Handler
	// OperatorPages, when set, serves the operator console under
	// /operator/ (package operator) on the API's listener; serve leaves it
	// unset when the console has a listener of its own (AdminHandler).
	OperatorPages http.Handler

	// Operations.
	//
	// Metrics records request metrics; with ServeMetrics the handler also
	// serves GET /metrics (leave it off when metrics have their own listener).
	Metrics      *telemetry.Metrics
	ServeMetrics bool
	// Health answers GET /healthz and GET /readyz.
	Health *telemetry.Health
	// RateLimiter enforces RateLimits; a policy that is off is not checked.
	RateLimiter ratelimit.Limiter
	// RateLimits default to DefaultRateLimits.
	RateLimits *RateLimits
	// TrustedProxies may set X-Forwarded-For: the client IP of anonymous
	// callers is taken from it only when the peer is one of them.
	TrustedProxies []netip.Prefix
	// Bookings confirms, reads, cancels and reschedules bookings.
	Bookings *booking.Lifecycle
	// CalendarFeed serves the providers' iCalendar feeds.
	CalendarFeed *calfeed.Feed
	// Providers serves the provider API (nil: its routes answer 404
	// not_found).
	Providers *provider.API
}

// Server serves the API.
type Server struct {
	baseURL    string
	production bool
	// sunset is the Sunset header value of legacy responses ("" for none).
	sunset       string
	authOptional bool
	log          *slog.Logger
	now          func() time.Time
	contract     Contract
	catalog      *catalog.Catalog
	providers    *provider.API
	auth         *auth.Authenticator
	store        Store
	testMessages TestMessages
	testClock    *testrealm.Clock
	events       Events
	followups    *followup.Service
	search       *booking.Search
	bookings     *booking.Lifecycle
	feed         *calfeed.Feed
	serviceTexts map[string]serviceTexts
	// taxConditions are the conditions of each kind of tax reduction
	// estimate, encoded once per rules.
	taxConditions map[string][]byte
	// openapiJSON is the contract document as served: servers names
	// baseURL.
	openapiJSON []byte
	// llmsText is the body of /llms.txt, built once in New.
	llmsText []byte
	// docsPage renders the body of /docs, once.
	docsPage func() ([]byte, error)
	oauth    AuthorizationServer

	providerPages http.Handler
	operatorPages http.Handler

	webhooks            Webhooks
	webhookAllowPrivate bool
	metrics             *telemetry.Metrics
	limiter             ratelimit.Limiter
	limits              RateLimits
	trustedProxies      []netip.Prefix
	// limiterWarned is when the last limiter warning was logged (Unix ns).
	limiterWarned atomic.Int64
	// partners keeps whether a partner credential exists (production).
	partners partnerGate
	// searchBufs recycles the buffers responses are encoded into (a
	// search answer is tens of kilobytes); see getBuf.
	searchBufs sync.Pool
	// mcp is the MCP surface; its tools run operations (the v1 routes by
	// "METHOD pattern") through Invoke.
	mcp        *mcp.Server
	operations map[string]route
	handler    http.Handler
}

// New returns a Server for the configuration.
func New(cfg Config) (*Server, error) { return newServer(cfg, nil) }

// newServer returns a Server serving, beside its route table, the routes
// extra returns (nil: none); a route of extra replaces the table's route of
// the same method and pattern. Tests exercise middleware on route shapes of
// their own with it.
func newServer(cfg Config, extra func(s *Server) []route) (*Server, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &Server{
		baseURL:      strings.TrimRight(cfg.BaseURL, "/"),
		production:   cfg.Production,
		sunset:       sunsetHeader(cfg.LegacySunset),
		authOptional: cfg.AuthOptional,
		log:          cfg.Logger,
		now:          cfg.Now,
		contract:     cfg.Contract,
		catalog:      cfg.Catalog,
		providers:    cfg.Providers,
		auth:         cfg.Auth,
		store:        cfg.Store,
		testMessages: cfg.TestMessages,
		testClock:    cfg.TestClock,
		events:       cfg.Events,
		followups:    cfg.Followups,
		search:       cfg.Search,

		webhooks:            cfg.Webhooks,
		webhookAllowPrivate: cfg.WebhookAllowPrivate,
		oauth:               cfg.OAuth,
		providerPages:       cfg.ProviderPages,
		operatorPages:       cfg.OperatorPages,

		metrics:        cfg.Metrics,
		limiter:        cfg.RateLimiter,
		limits:         DefaultRateLimits(),
		trustedProxies: cfg.TrustedProxies,
		bookings:       cfg.Bookings,
		feed:           cfg.CalendarFeed,
	}
	texts, err := serviceTextsFor(cfg.Catalog, s.baseURL)
	if err != nil {
		return nil, fmt.Errorf("httpapi: rendering service terms: %w", err)
	}
	s.serviceTexts = texts
	s.taxConditions = taxConditionsFor(cfg.Catalog.TaxRules)
	if cfg.RateLimits != nil {
		s.limits = *cfg.RateLimits
	}
	if s.mcp, err = s.newMCP(cfg.Contract); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	rts := s.routes()
	if extra != nil {
		extra := extra(s)
		rts = slices.DeleteFunc(rts, func(rt route) bool {
			return slices.ContainsFunc(extra, func(x route) bool { return x.method == rt.method && x.pattern == rt.pattern })
		})
		rts = append(rts, extra...)
	}
	if err := s.servedDocuments(rts); err != nil {
		return nil, err
	}
	for _, rt := range rts {
		mux.Handle(rt.method+" "+rt.pattern, s.wrap(rt))
	}
	for _, pr := range s.protocolRoutes() {
		if pr.handler == nil { // an optional surface that is not configured
			continue
		}
		mux.Handle(pr.method+" "+pr.pattern, s.wrapProtocol(pr))
	}
	s.operatorRoutes(mux, cfg)
	mux.Handle("/", s.wrap(route{pattern: "/", contract: bokat.BookingsContractVersion, handler: s.handleUnknownPath(mux)}))
	s.handler = s.withRequestInfo(mux)
	return s, nil
}

// check reports the dependencies the configuration lacks.
func (cfg *Config) check() error {
	var missing []string
	for _, d := range []struct {
		name string
		set  bool
	}{
		{"Logger", cfg.Logger != nil}, {"Now", cfg.Now != nil}, {"Contract", cfg.Contract != nil},
		{"Catalog", cfg.Catalog != nil}, {"Auth", cfg.Auth != nil}, {"Store", cfg.Store != nil},
		{"Followups", cfg.Followups != nil}, {"Search", cfg.Search != nil}, {"Bookings", cfg.Bookings != nil},
		{"CalendarFeed", cfg.CalendarFeed != nil}, {"Webhooks", cfg.Webhooks != nil}, {"OAuth", cfg.OAuth != nil},
		{"Metrics", cfg.Metrics != nil}, {"Health", cfg.Health != nil}, {"RateLimiter", cfg.RateLimiter != nil},
	} {
		if !d.set {
			missing = append(missing, d.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("httpapi: Config lacks %s", strings.Join(missing, ", "))
	}
	if cfg.Production && cfg.AuthOptional {
		return errors.New("httpapi: --auth-optional is development only")
	}
	if cfg.Production && cfg.WebhookAllowPrivate {
		return errors.New("httpapi: --webhook-allow-private is development only")
	}
	return nil
}

// Handler returns the server's root handler.
func (s *Server) Handler() http.Handler { return s.handler }

// handleUnknownPath answers 405 when another method serves the path, and 404
// otherwise, in the Problem shape.
func (s *Server) handleUnknownPath(mux *http.ServeMux) handlerFunc {
	methods := []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut, http.MethodPatch}
	return func(w http.ResponseWriter, r *http.Request) error {
		var allowed []string
		for _, m := range methods {
			if m == r.Method {
				continue
			}
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			return bokat.Errorf(bokat.CodeMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.EscapedPath())
		}
		return bokat.Errorf(bokat.CodeNotFound, "no operation at %s", r.URL.EscapedPath())
	}
}

// sunsetHeader returns the RFC 8594 Sunset value (an HTTP-date) of t, or ""
// for the zero time.
func sunsetHeader(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(http.TimeFormat)
}
