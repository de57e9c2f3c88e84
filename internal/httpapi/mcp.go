package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/mcp"
)

// The MCP surface (package mcp) is served at /mcp. Its tools run the REST
// operations through Invoke: the same route handler, so the same
// validation against the contract, the same use case and the same wire
// body or Problem. What is particular to MCP (protocol, challenges, tool
// descriptions) stays in package mcp.

var _ mcp.Backend = (*Server)(nil)

// newMCP builds the MCP surface over this server's routes.
func (s *Server) newMCP(contract mcp.Contract) (*mcp.Server, error) {
	s.operations = make(map[string]route)
	for _, rt := range s.routes() {
		if rt.successor == "" {
			s.operations[rt.method+" "+rt.pattern] = rt
		}
	}
	return mcp.New(mcp.Config{BaseURL: s.baseURL, Contract: contract, Auth: mcpAuthenticator{s}, Backend: s, Logger: s.log, Now: s.now})
}

// developmentPrincipal is the caller admitted without a credential by a
// development server run with AuthOptional.
func developmentPrincipal() bokat.Principal {
	return bokat.Principal{Kind: bokat.PrincipalDevelopment, ClientID: "development", Scopes: bokat.AllScopes()}
}

// mcpAuthenticator resolves the credentials of MCP requests as the routes
// do: on a development server run with AuthOptional, a caller without a
// credential is the development principal.
type mcpAuthenticator struct{ s *Server }

func (a mcpAuthenticator) Authenticate(ctx context.Context, r *http.Request) (bokat.Principal, error) {
	p, err := a.s.auth.Authenticate(ctx, r, bokat.AudienceMCP)
	if err == nil && !p.Authenticated() && a.s.authOptional && !a.s.production {
		return developmentPrincipal(), nil
	}
	return p, err
}

type clientIPKey struct{}

// mcpEndpoint serves the MCP endpoint, remembering the caller's address
// (for the rate limits of anonymous tool calls).
func (s *Server) mcpEndpoint() http.Handler {
	h := s.mcp.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientIPKey{}, s.clientIP(r))))
	})
}

// Invoke runs the v1 operation method+pattern for the principal in ctx, as
// its route does after authentication: the rate limit of the route's
// class, the route's scope, then its handler. It returns the status and
// the JSON object written: the success body or the Problem. It implements
// mcp.Backend.
func (s *Server) Invoke(ctx context.Context, method, pattern string, pathValues map[string]string, body []byte) (int, []byte) {
	w := &bufferedResponse{header: http.Header{}}
	rt, ok := s.operations[method+" "+pattern]
	outer := requestInfoFrom(ctx)
	inner := *outer
	inner.contract = bokat.BookingsContractVersion
	if ok {
		inner.contract = rt.contract
	}
	ctx = context.WithValue(ctx, requestInfoKey{}, &inner)
	p := auth.PrincipalFrom(ctx)
	outer.clientID = p.ClientID

	path, missing := fillPattern(pattern, pathValues)
	r, err := http.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
	if err != nil || !ok {
		s.writeError(w, (&http.Request{URL: &url.URL{Path: pattern}}).WithContext(ctx),
			fmt.Errorf("invoke %s %s: no such operation (%v)", method, pattern, err))
		return w.result()
	}
	r.Header.Set("Content-Type", "application/json")
	for name, v := range pathValues {
		r.SetPathValue(name, v)
	}
	if ip, ok := ctx.Value(clientIPKey{}).(netip.Addr); ok && ip.IsValid() {
		r.RemoteAddr = ip.String()
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if !s.allowRequest(w, r, rt, p) {
		return w.result()
	}
	if err := invokeCheck(rt, p, missing, method, body); err != nil {
		s.writeError(w, r, err)
		return w.result()
	}
	if err := rt.handler(w, r); err != nil {
		if errors.Is(err, booking.ErrPreviewed) {
			return 0, nil
		}
		s.writeError(w, r, err)
	}
	return w.result()
}

// InvokeElicited runs the write as Invoke does, taking part in an MCP
// consent form through e (see booking.Elicitation): a preview that passes
// the write's checks answers status 0, no body, and e.Summary. It
// implements mcp.Backend.
func (s *Server) InvokeElicited(ctx context.Context, e *booking.Elicitation, method, pattern string, pathValues map[string]string,
	body []byte) (int, []byte) {
	return s.Invoke(booking.WithElicitation(ctx, e), method, pattern, pathValues, body)
}

// Problem renders err as the routes do. It implements mcp.Backend.
func (s *Server) Problem(ctx context.Context, err error) (int, []byte) {
	w := &bufferedResponse{header: http.Header{}}
	s.writeError(w, (&http.Request{URL: &url.URL{Path: "/mcp"}}).WithContext(ctx), err)
	return w.result()
}

// ElicitationKey returns the key that signs MCP elicitation states, derived
// from the option signing key keyID ("" for the signing key), and its id.
// It implements mcp.Backend.
func (s *Server) ElicitationKey(keyID string) (string, []byte, error) {
	return s.bookings.DerivedKey(keyID, mcp.ElicitationKeyLabel)
}

// invokeCheck refuses what the REST route's transport would have refused
// before its handler: a missing path value, a missing scope, and members
// for an operation that takes no body.
func invokeCheck(rt route, p bokat.Principal, missing []string, method string, body []byte) error {
	if len(missing) > 0 {
		issues := make([]string, 0, len(missing))
		for _, name := range missing {
			issues = append(issues, name+": is required")
		}
		return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The request does not match the contract; see issues.", Issues: issues}
	}
	if rt.auth != authNone && rt.scope != "" && !p.Has(rt.scope) {
		return &bokat.Error{Code: bokat.CodeInsufficientScope, Detail: fmt.Sprintf("This operation requires the scope %s.", rt.scope),
			Extra: map[string]any{"required_scope": string(rt.scope)}}
	}
	if method == http.MethodGet {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(body, &members); err != nil {
			return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The arguments must be a JSON object.",
				Issues: []string{"(root): must be an object"}}
		}
		if len(members) > 0 {
			var issues []string
			for name := range members {
				issues = append(issues, fmt.Sprintf("(root): unknown field %q", name))
			}
			slices.Sort(issues)
			return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The request does not match the contract; see issues.", Issues: issues}
		}
	}
	return nil
}

// fillPattern fills the wildcards of a route pattern with escaped values,
// naming those without a (non-empty) value.
func fillPattern(pattern string, values map[string]string) (path string, missing []string) {
	var b strings.Builder
	for {
		open := strings.IndexByte(pattern, '{')
		end := strings.IndexByte(pattern, '}')
		if open < 0 || end < open {
			b.WriteString(pattern)
			return b.String(), missing
		}
		b.WriteString(pattern[:open])
		name := pattern[open+1 : end]
		v := values[name]
		if v == "" {
			missing = append(missing, name)
			v = "-"
		}
		b.WriteString(url.PathEscape(v))
		pattern = pattern[end+1:]
	}
}

// bufferedResponse keeps what a route handler writes.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// result is the status and the JSON object written, without the line
// break writeJSON ends bodies with.
func (b *bufferedResponse) result() (int, []byte) {
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	return status, bytes.TrimSpace(b.body.Bytes())
}
