// Package mcp is Bokat's second client surface: a Model Context Protocol
// server (Streamable HTTP, stateless, JSON responses) whose tools are the
// booking contract's operations. It decides nothing about bookings itself:
// each tool runs the REST operation it stands for through a Backend (the
// HTTP surface, which validates against the OpenAPI contract and calls the
// booking use cases), and its input and output schemas are derived from the
// same contract. The package adds what is particular to MCP: the tool
// descriptions and annotations, the protocol handling (the official SDK),
// Origin validation, and OAuth resource-server challenges (RFC 6750,
// RFC 9728) for tools that need a credential.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"bokat"
	"bokat/api"
	"bokat/internal/booking"
)

// ProtocolVersions are the MCP revisions served, newest first: the
// stateless 2026 revision and the two 2025 revisions today's large clients
// negotiate.
var ProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// Contract is the OpenAPI contract the tool schemas are derived from.
type Contract interface {
	OperationSchemas(method, path string) (api.OperationSchemas, error)
}

// Authenticator resolves the credential of a request: an anonymous
// principal when none is sent, an error wrapping auth.ErrInvalidCredential
// when it is not valid.
type Authenticator interface {
	Authenticate(ctx context.Context, r *http.Request) (bokat.Principal, error)
}

// Operation is one run of the REST operation a tool stands for.
type Operation struct {
	// Method and Path name the operation (Path is the contract's template).
	Method, Path string
	// PathValues fill the template's parameters.
	PathValues map[string]string
	// Body is the JSON body.
	Body []byte
	// Elicitation, when set, makes a write take part in a consent form
	// (see booking.Elicitation).
	Elicitation *booking.Elicitation
}

// Answer is what an operation answered: the HTTP status and the JSON object
// its REST route answers (its success body or its Problem), or, for an
// Elicitation preview whose checks passed, the Preview alone.
type Answer struct {
	Status int
	Body   []byte
	// Preview is what the user is asked to accept; nothing was written.
	Preview *booking.ConsentSummary
}

// Backend runs the REST operations the tools stand for.
type Backend interface {
	// Invoke runs op for the principal in ctx through the same operation
	// step its REST route runs (rate limit, scope, text checks, validation,
	// use case, wire body).
	Invoke(ctx context.Context, op Operation) Answer
	// Admit charges n messages that run no operation (initialize,
	// tools/list, ping, notifications) to the caller's quota. When the
	// quota is spent it answers the request itself and returns false.
	Admit(w http.ResponseWriter, r *http.Request, n int) bool
	// ElicitationKey returns the key that signs requestState, derived
	// under ElicitationKeyLabel from the option signing key keyID ("" for
	// the current one), and that key's id.
	ElicitationKey(keyID string) (id string, key []byte, err error)
	// Problem renders err as the operations do: its status and Problem.
	Problem(ctx context.Context, err error) (status int, resp []byte)
}

// Config holds the server's dependencies; all are required but Logger,
// Now and Observe.
type Config struct {
	// BaseURL is the public address of the service, without a trailing slash.
	BaseURL  string
	Contract Contract
	Auth     Authenticator
	Backend  Backend
	Logger   *slog.Logger
	// Now is the clock of elicitation states; defaults to time.Now.
	Now func() time.Time
	// Observe counts each tool result by tool and status: the HTTP status
	// of the operation's answer, 0 for an input-required result. ctx is
	// the call's, carrying its principal (so that test-mode calls can be
	// left out of the live metrics).
	Observe func(ctx context.Context, tool string, status int)
}

// Server is the MCP surface.
type Server struct {
	baseURL string
	// host is the base URL's host name, admitted by checkHost.
	host    string
	auth    Authenticator
	backend Backend
	now     func() time.Time
	log     *slog.Logger
	observe func(ctx context.Context, tool string, status int)
	tools   map[string]tool
	handler http.Handler
}

// New builds the server: it derives every tool's schemas from the
// contract, failing when the contract lacks an operation a tool needs. The
// tools are derived once per contract and shared by the servers built on
// it.
func New(cfg Config) (*Server, error) {
	if cfg.Contract == nil || cfg.Auth == nil || cfg.Backend == nil || cfg.BaseURL == "" {
		return nil, errors.New("mcp: BaseURL, Contract, Auth and Backend are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		baseURL: strings.TrimRight(cfg.BaseURL, "/"),
		auth:    cfg.Auth,
		backend: cfg.Backend,
		now:     cfg.Now,
		log:     log,
		observe: cfg.Observe,
		tools:   make(map[string]tool),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.observe == nil {
		s.observe = func(context.Context, string, int) {}
	}
	derived, err := toolsOf(cfg.Contract)
	if err != nil {
		return nil, err
	}
	for _, t := range derived {
		s.tools[t.def.Name] = t
	}
	// The SDK logs every stateless request's session at info level: only
	// its warnings and errors are passed on (the access log has the rest).
	sdkLog := slog.New(minLevel{log.Handler(), slog.LevelWarn})
	// The protocol server is built on the first MCP request: adding a tool
	// costs the SDK a decoding of its schemas, and most servers a test
	// builds never serve MCP. toolsOf had the SDK check the tools.
	protocol := sync.OnceValue(func() *sdk.Server {
		srv := newProtocolServer(sdkLog)
		for _, t := range derived {
			srv.AddTool(t.def, s.callTool(t))
		}
		return srv
	})
	u, err := url.Parse(s.baseURL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("mcp: base URL %q has no host", cfg.BaseURL)
	}
	s.host = u.Hostname()
	// The SDK's DNS-rebinding guard refuses every non-loopback Host on a
	// loopback listener, which would lock out a reverse proxy on the same
	// machine that keeps the public Host: checkHost does the same, but
	// admits the base URL's host.
	streamable := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return protocol() },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: sdkLog, DisableLocalhostProtection: true})
	s.handler = s.checkHost(http.NewCrossOriginProtection().Handler(s.authorize(streamable)))
	return s, nil
}

// newProtocolServer returns an SDK server without tools, logging to log.
func newProtocolServer(log *slog.Logger) *sdk.Server {
	return sdk.NewServer(&sdk.Implementation{Name: "bokat", Title: "Bokat — book home services in Sweden",
		Version: bokat.BookingsContractVersion},
		&sdk.ServerOptions{
			Instructions:              Instructions,
			Logger:                    log,
			SupportedProtocolVersions: ProtocolVersions,
			Capabilities:              &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		})
}

// checkHost refuses DNS rebinding: a request that reached a loopback
// listener must name a loopback host or the base URL's host. A page of a
// rebound name would otherwise pass the Origin check, its Origin and Host
// being the same attacker-chosen name.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if local != nil && isLoopback(local.String()) && !isLoopback(r.Host) && !strings.EqualFold(hostname(r.Host), s.host) {
			http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostname is the host of "host", "host:port" or "[ipv6]:port".
func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// isLoopback reports whether a host (or host:port) is localhost or a
// loopback address.
func isLoopback(hostport string) bool {
	h := hostname(hostport)
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// Handler serves the MCP endpoint ({base_url}/mcp): POST carries the
// JSON-RPC messages; GET and DELETE answer 405 (the server keeps no
// sessions). A request from a foreign Origin answers 403.
func (s *Server) Handler() http.Handler { return s.handler }

// Instructions tell a model the rules of the contract in a few lines; they
// are sent at initialization.
const Instructions = `Bokat books fixed-price home services in Sweden with real providers. Rules:
1. Search before confirming: call search_booking_options, show the user the options, and confirm only an option they chose, passing its booking_option_id unchanged.
2. Options expire (expires_at). If a result says booking_option_expired or option_refresh_required, search again and get the user's new choice.
3. Never tell the user a booking exists unless a result has booking_created true. A follow-up request is not a booking.
4. Show provider, time, price, scope and terms exactly as returned; promise nothing beyond them.
5. Ask the user and get an explicit yes before confirm_booking, cancel_booking and reschedule_booking; set the consent and confirmation fields true only after that yes.
6. Every write takes an idempotency_key: reuse it to retry the same request, use a new one for a new request.
Follow the safe_next_step of every result.`

// resourceMetadata is the RFC 9728 protected resource metadata of the MCP
// endpoint.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
}

// ResourceMetadata serves GET /.well-known/oauth-protected-resource/mcp,
// the document the challenges of the MCP endpoint name.
func (s *Server) ResourceMetadata() http.Handler {
	var scopes []string
	for _, t := range s.tools {
		if t.scope != "" && !slices.Contains(scopes, string(t.scope)) {
			scopes = append(scopes, string(t.scope))
		}
	}
	slices.Sort(scopes)
	body, err := json.Marshal(resourceMetadata{
		Resource:               s.resource(),
		AuthorizationServers:   []string{s.baseURL},
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Bokat booking MCP server",
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(append(body, '\n'))
	})
}

// resource is the URL of the MCP endpoint, the resource its tokens are for.
func (s *Server) resource() string { return s.baseURL + "/mcp" }

// metadataURL is the address of the resource metadata document.
func (s *Server) metadataURL() string { return s.baseURL + "/.well-known/oauth-protected-resource/mcp" }

// minLevel drops the records below a level.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}
