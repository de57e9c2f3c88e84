package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/api"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/logtest"
	"bokat/internal/oauth"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
)

// Both load once per process and are immutable.
var (
	loadContract = api.Load
	loadCatalog  = catalog.Load
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

// testSealing seals the webhook signing secrets of every test server.
var testSealing = func() *webhook.Keyring {
	k, err := webhook.NewKeyring(bytes.Repeat([]byte{9}, webhook.KeySize))
	if err != nil {
		panic(err)
	}
	return k
}()

// TestWiring is what a test server's set-up hands the process wiring: the
// Config to complete, the store under it, the test keys, and what the test
// varies in the authorization server.
type TestWiring struct {
	Config     *Config
	DB         *sqlstore.DB
	Hasher     *auth.Hasher
	OptionKeys *booking.Keyring
	FeedKey    []byte
	Sealing    *webhook.Keyring
	// OAuth configures the authorization server (nil: as serve without a
	// mailer or limits); AccessTokens replaces the verifier of OAuth access
	// tokens.
	OAuth        *oauth.Config
	AccessTokens auth.AccessTokenVerifier
}

// WireTest gives a Config every part it lacks through the process wiring
// (internal/wire), as serve builds them. The wiring imports this package,
// so these files cannot import it: wire_test.go, a file of the external
// test package, sets WireTest before any test runs (docs/decisions.md, "One
// wiring, and how the API's tests reach it").
var WireTest func(TestWiring) error

// testEnv is a real server on a real store, reached through real HTTP.
type testEnv struct {
	t        testing.TB
	db       *sqlstore.DB
	srv      *Server
	http     *httptest.Server
	contract *api.Contract
	authn    *auth.Authenticator
	logs     *logtest.Buffer
	// now is the server's clock.
	now func() time.Time
	// token is a partner token with every scope.
	token string

	// authServer is the authorization server the server runs.
	authServer AuthorizationServer
}

// envConfig is what a test varies in its server: the Config, and what the
// server is built with beside it.
type envConfig struct {
	Config
	// accessTokens verifies OAuth access tokens; the authorization server
	// (Config.OAuth) by default.
	accessTokens auth.AccessTokenVerifier
	// oauth configures the authorization server the wiring builds (nil: no
	// sender, no limits); hasher replaces the test token hasher.
	oauth  *oauth.Config
	hasher *auth.Hasher
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
	logs := &logtest.Buffer{}
	cfg := envConfig{Config: Config{
		BaseURL:  "http://bokat.test",
		Logger:   slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:      time.Now,
		Contract: contract,
		Catalog:  cat,
		Store:    db,
	}}
	for _, o := range opts {
		o(&cfg)
	}
	hasher := cfg.hasher
	if hasher == nil {
		if hasher, err = auth.NewHasher([]byte("0123456789abcdef0123456789abcdef")); err != nil {
			t.Fatal(err)
		}
	}
	completeConfig(t, db, hasher, &cfg)
	srv, err := newServer(cfg.Config, cfg.extraRoutes)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	e := &testEnv{t: t, db: db, srv: srv, authServer: cfg.OAuth, http: hs, contract: contract, authn: cfg.Auth, logs: logs, now: cfg.Now}
	e.token = e.partner("all-scopes", bokat.AllScopes()...)
	return e
}

// completeConfig gives cfg, on the store db, every dependency it lacks:
// real ones, built by the process wiring as serve builds them. Rate limits
// are off unless a test sets them.
func completeConfig(t testing.TB, db *sqlstore.DB, hasher *auth.Hasher, cfg *envConfig) {
	t.Helper()
	if cfg.RateLimiter == nil && cfg.RateLimits == nil {
		cfg.RateLimits = &RateLimits{} // every policy off
	}
	err := WireTest(TestWiring{Config: &cfg.Config, DB: db, Hasher: hasher, OptionKeys: testOptionKeys, FeedKey: testFeedKey,
		Sealing: testSealing, OAuth: cfg.oauth, AccessTokens: cfg.accessTokens})
	if err != nil {
		t.Fatal(err)
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
	// sent and received are the server's clock before the request and
	// after the response: its server_time lies between them.
	sent, received time.Time
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
	sent := e.now()
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	out := response{Status: resp.StatusCode, Header: resp.Header, Body: raw, sent: sent, received: e.now()}
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
