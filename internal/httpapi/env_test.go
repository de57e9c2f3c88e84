package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/api"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/calfeed"
	"bokat/internal/catalog"
	"bokat/internal/followup"
	"bokat/internal/oauth"
	"bokat/internal/provider"
	"bokat/internal/ratelimit"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/telemetry"
	"bokat/internal/webhook"
)

// Loaded once per test process: both are immutable.
var (
	loadContract = sync.OnceValues(api.Load)
	loadCatalog  = sync.OnceValues(catalog.Load)
)

// testOptionKeys signs the booking options of every test server.
var testOptionKeys = func() *booking.Keyring {
	k, err := booking.NewKeyring(booking.Key{ID: "test", Secret: bytes.Repeat([]byte{5}, 32)})
	if err != nil {
		panic(err)
	}
	return k
}()

// testFeedKey signs the calendar feed addresses of every test server.
var testFeedKey = bytes.Repeat([]byte{7}, 32)

// testEnv is a real server on a real store, reached through real HTTP.
type testEnv struct {
	t        testing.TB
	db       *sqlstore.DB
	srv      *Server
	http     *httptest.Server
	contract *api.Contract
	authn    *auth.Authenticator
	logs     *syncBuffer
	// token is a partner token with every scope.
	token string
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// envConfig is what a test varies in its server: the Config, and what the
// server is built with beside it.
type envConfig struct {
	Config
	// accessTokens verifies OAuth access tokens; the authorization server
	// (Config.OAuth) by default.
	accessTokens auth.AccessTokenVerifier
	// extraRoutes, when set, are served beside the real table (for testing
	// middleware on a route shape the foundation does not have yet).
	extraRoutes func(s *Server) []route
}

type envOption func(*envConfig)

// withAccessTokens has the server accept the OAuth access tokens v verifies.
func withAccessTokens(v auth.AccessTokenVerifier) envOption {
	return func(c *envConfig) { c.accessTokens = v }
}

// newTestEnv starts a server on db with every dependency real, as serve
// wires it; opts vary it.
func newTestEnv(t testing.TB, db *sqlstore.DB, opts ...envOption) *testEnv {
	t.Helper()
	contract, err := loadContract()
	if err != nil {
		t.Fatalf("load contract: %v", err)
	}
	cat, err := loadCatalog()
	if err != nil {
		t.Fatalf("load catalog: %v", err)
	}
	hasher, err := auth.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cfg := envConfig{Config: Config{
		BaseURL:   "http://bokat.test",
		Logger:    slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:       time.Now,
		Contract:  contract,
		Catalog:   cat,
		Store:     db,
		Followups: followup.New(sqlstore.Bind[followup.Tx](db), cat, nil, nil),
	}}
	for _, o := range opts {
		o(&cfg)
	}
	completeConfig(t, db, hasher, &cfg)
	srv, err := newServer(cfg.Config, cfg.extraRoutes)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	e := &testEnv{t: t, db: db, srv: srv, http: hs, contract: contract, authn: cfg.Auth, logs: logs}
	e.token = e.partner("all-scopes", bokat.AllScopes()...)
	return e
}

// completeConfig gives cfg, on the store db, every dependency it lacks:
// real ones, as serve builds them. Rate limits are off unless a test sets
// them.
func completeConfig(t testing.TB, db *sqlstore.DB, hasher *auth.Hasher, cfg *envConfig) {
	t.Helper()
	var err error
	if cfg.Search == nil {
		if cfg.Search, err = booking.NewSearch(booking.Config{Catalog: cfg.Catalog, Store: db, Keys: testOptionKeys, Now: cfg.Now}); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Bookings == nil {
		if cfg.Bookings, err = booking.NewLifecycle(booking.LifecycleConfig{Store: sqlstore.Bind[booking.Tx](db), Catalog: cfg.Catalog, Keys: testOptionKeys, Now: cfg.Now}); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.CalendarFeed == nil {
		cfg.CalendarFeed, err = calfeed.New(calfeed.Config{Key: testFeedKey, Store: db, BaseURL: cfg.BaseURL, Now: cfg.Now})
		if err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Webhooks == nil {
		keys, err := webhook.NewKeyring(bytes.Repeat([]byte{9}, webhook.KeySize))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Webhooks = webhook.NewService(webhook.ServiceConfig{Store: sqlstore.Bind[webhook.Tx](db),
			Guard: webhook.NewGuard(net.DefaultResolver, cfg.WebhookAllowPrivate), Keys: keys, Now: cfg.Now})
	}
	if cfg.OAuth == nil {
		as, err := oauth.New(oauth.Config{BaseURL: cfg.BaseURL, Production: cfg.Production, Store: sqlstore.Bind[oauth.Tx](db), Hasher: hasher,
			Logger: cfg.Logger, Now: cfg.Now})
		if err != nil {
			t.Fatal(err)
		}
		cfg.OAuth = as
		if cfg.accessTokens == nil {
			cfg.accessTokens = as
		}
	}
	if cfg.Auth == nil {
		cfg.Auth = auth.NewAuthenticator(hasher, db, cfg.accessTokens).WithProviderTokens(db)
	}
	if cfg.Providers == nil {
		cfg.Providers = provider.NewAPI(sqlstore.Bind[provider.Tx](db), sqlstore.Bind[provider.SupplyTx](db), cfg.Catalog, cfg.Now, cfg.Logger)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = telemetry.NewMetrics(cfg.Now)
	}
	if cfg.Health == nil {
		store := cfg.Store
		cfg.Health = telemetry.NewHealth(cfg.Logger, telemetry.Check{Name: "database", Run: func(ctx context.Context) error {
			if err := store.Ping(ctx); err != nil {
				return telemetry.Failed("unreachable", err)
			}
			return nil
		}})
	}
	if cfg.RateLimiter == nil {
		cfg.RateLimiter = ratelimit.NewMemory(ratelimit.MemoryOptions{Now: cfg.Now})
		if cfg.RateLimits == nil {
			cfg.RateLimits = &RateLimits{} // every policy off
		}
	}
}

// forEachEngine runs fn with a fresh server on each test engine.
func forEachEngine(t *testing.T, fn func(t *testing.T, e *testEnv), opts ...envOption) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		fn(t, newTestEnv(t, db, opts...))
	})
}

// sqliteEnv is a fresh server on SQLite, for tests of engine-neutral behaviour.
func sqliteEnv(t testing.TB, opts ...envOption) *testEnv {
	return newTestEnv(t, sqlstoretest.Open(t, sqlstore.SQLite), opts...)
}

// partner creates a partner client with the scopes and returns its token.
func (e *testEnv) partner(name string, scopes ...bokat.Scope) string {
	e.t.Helper()
	_, token, err := e.authn.CreatePartner(context.Background(), name, scopes, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return token
}

// response is a received response whose body was validated against the contract.
type response struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

// request describes one call.
type request struct {
	Method string
	Path   string
	// Body is sent as is when it is a string or []byte, else JSON-encoded.
	Body        any
	Header      map[string]string
	ContentType string
	// NoValidate skips validating the response against the contract (for
	// paths the contract does not describe, such as /problems pages).
	NoValidate bool
}

// do sends the request and checks the response against the OpenAPI
// document, failing the test on any drift.
func (e *testEnv) do(req request) response {
	e.t.Helper()
	var body io.Reader
	switch b := req.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	r, err := http.NewRequest(req.Method, e.http.URL+req.Path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		ct := req.ContentType
		if ct == "" {
			ct = "application/json"
		}
		r.Header.Set("Content-Type", ct)
	}
	for k, v := range req.Header {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	out := response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		if err := json.Unmarshal(raw, &out.JSON); err != nil {
			e.t.Fatalf("%s %s: response is not a JSON object: %v\n%s", req.Method, req.Path, err, raw)
		}
	}
	if !req.NoValidate {
		if err := e.contract.ValidateResponse(context.Background(), r, resp.StatusCode, resp.Header, raw); err != nil {
			e.t.Errorf("%s %s: response %d does not match the contract: %v\n%s", req.Method, req.Path, resp.StatusCode, err, raw)
		}
	}
	return out
}

// bearer returns the Authorization header for a token.
func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// revokeAllPartners revokes every partner client, as an operator would.
func revokeAllPartners(t *testing.T, e *testEnv) {
	t.Helper()
	err := e.db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		_, err := tx.Q().ExecContext(context.Background(), `UPDATE partner_clients SET revoked_at = 1`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
