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

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/mcp"
)

// The MCP surface (package mcp) is served at /mcp. Its tools run the REST
// operations through Invoke: the route's own operation step (operate) and
// handler, so the same rate limit, scope and text checks, the same
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
	return mcp.New(mcp.Config{BaseURL: s.baseURL, Contract: contract, Auth: mcpAuthenticator{s}, Backend: s, Logger: s.log, Now: s.now,
		Observe: s.observeToolResult})
}

// observeToolResult counts a tool result in the live metrics, unless the
// call was a test credential's: test activity is never counted, as its
// REST requests are not (withRequestInfo).
func (s *Server) observeToolResult(ctx context.Context, tool string, status int) {
	if auth.PrincipalFrom(ctx).Realm().Test() {
		return
	}
	s.metrics.ObserveToolResult(tool, status)
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
	if h, ok := ctx.Value(responseHeaderKey{}).(http.Header); ok && err == nil {
		markMode(h, p, requestInfoFrom(ctx))
	}
	return p, err
}

// responseHeaderKey carries the header of the /mcp response, so that the
// authenticator marks the answers to a test credential (markMode).
type responseHeaderKey struct{}

type clientIPKey struct{}

// mcpEndpoint serves the MCP endpoint, remembering the caller's address
// (for the rate limits of anonymous tool calls).
func (s *Server) mcpEndpoint() http.Handler {
	h := s.mcp.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), clientIPKey{}, s.clientIP(r))
		h.ServeHTTP(w, r.WithContext(context.WithValue(ctx, responseHeaderKey{}, w.Header())))
	})
}

// Invoke runs the v1 operation op names for the principal in ctx: the
// transport of a tool call (toolRequest) and then the operation step of the
// route (operate), as a REST request to it would. An elicitation preview
// whose checks pass answers its summary. It implements mcp.Backend.
func (s *Server) Invoke(ctx context.Context, op mcp.Operation) mcp.Answer {
	w := &bufferedResponse{header: http.Header{}}
	outer := requestInfoFrom(ctx)
	inner := *outer
	ctx = context.WithValue(ctx, requestInfoKey{}, &inner)
	p := auth.PrincipalFrom(ctx)
	outer.clientID = p.ClientID
	if op.Elicitation != nil {
		ctx = booking.WithElicitation(ctx, *op.Elicitation)
	}
	rt, ok := s.operations[op.Method+" "+op.Path]
	if !ok {
		s.writeError(w, (&http.Request{URL: &url.URL{Path: op.Path}}).WithContext(ctx),
			fmt.Errorf("invoke %s %s: no such operation", op.Method, op.Path))
		return w.answer()
	}
	inner.contract = rt.contract
	r, refused, err := s.toolRequest(ctx, w, rt, op)
	if err != nil {
		s.writeError(w, (&http.Request{URL: &url.URL{Path: op.Path}}).WithContext(ctx), err)
		return w.answer()
	}
	err = s.operate(w, r, rt, p, refused)
	var previewed *booking.Previewed
	if errors.As(err, &previewed) {
		return mcp.Answer{Preview: &previewed.Summary}
	}
	if err != nil {
		s.writeError(w, r, err)
	}
	return w.answer()
}

// toolRequest is the transport of a tool call: the request its REST route
// would get (the path filled with the path values, the JSON body, the
// caller's address, the body limit), and what the route's transport would
// have refused before its operation step: a missing path value, and
// members for an operation that takes no body. err is an internal failure.
func (s *Server) toolRequest(ctx context.Context, w http.ResponseWriter, rt route, op mcp.Operation) (r *http.Request, refused, err error) {
	var missing []string
	path := fillPattern(rt.pattern, func(name string) string {
		if v := op.PathValues[name]; v != "" {
			return v
		}
		missing = append(missing, name)
		return "-"
	})
	r, err = http.NewRequestWithContext(ctx, rt.method, path, bytes.NewReader(op.Body))
	if err != nil {
		return nil, nil, fmt.Errorf("invoke %s %s: %w", rt.method, rt.pattern, err)
	}
	r.Header.Set("Content-Type", "application/json")
	for name, v := range op.PathValues {
		r.SetPathValue(name, v)
	}
	if ip, ok := ctx.Value(clientIPKey{}).(netip.Addr); ok && ip.IsValid() {
		r.RemoteAddr = ip.String()
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if len(missing) > 0 {
		issues := make([]string, 0, len(missing))
		for _, name := range missing {
			issues = append(issues, name+": is required")
		}
		return r, &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The request does not match the contract; see issues.", Issues: issues}, nil
	}
	if rt.method == http.MethodGet {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(op.Body, &members); err != nil {
			return r, &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The arguments must be a JSON object.",
				Issues: []string{"(root): must be an object"}}, nil
		}
		if len(members) > 0 {
			var issues []string
			for name := range members {
				issues = append(issues, fmt.Sprintf("(root): unknown field %q", name))
			}
			slices.Sort(issues)
			return r, &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The request does not match the contract; see issues.", Issues: issues}, nil
		}
	}
	return r, nil, nil
}

// Admit charges n MCP messages that run no operation to the client IP's
// control quota (RateLimits.Control). It implements mcp.Backend.
func (s *Server) Admit(w http.ResponseWriter, r *http.Request, n int) bool {
	return s.allowControl(w, r, n)
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

// answer is result as an mcp.Answer.
func (b *bufferedResponse) answer() mcp.Answer {
	status, body := b.result()
	return mcp.Answer{Status: status, Body: body}
}
