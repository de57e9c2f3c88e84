package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/auth"
)

// maxBodyBytes is the request body limit (a booking_option_id alone can be
// 24,000 characters).
const maxBodyBytes = 64 << 10

// requestInfo is the request-scoped metadata every response carries.
type requestInfo struct {
	id       string
	traceID  string
	start    time.Time
	contract string
	legacy   bool
	route    string
	clientID string
	// operator marks /healthz, /readyz and /metrics: logged at debug level.
	operator bool
	// test marks a request of a test credential: logged, never counted in
	// the metrics.
	test bool
	// clock is how far the test credential's clock stands ahead of the
	// server's: its answers' server_time is on that clock.
	clock time.Duration
}

type requestInfoKey struct{}

func requestInfoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

// statusRecorder remembers the status written, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withRequestInfo assigns the request id and trace id, recovers panics into
// a Problem, and writes one access-log line per request. The log carries no
// body, query string or header values.
func (s *Server) withRequestInfo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := &requestInfo{
			id:       uuid.NewString(),
			traceID:  traceIDFrom(r.Header.Get("traceparent")),
			start:    time.Now(),
			contract: bokat.BookingsContractVersion,
		}
		ctx := context.WithValue(r.Context(), requestInfoKey{}, info)
		ctx = bokat.WithRequestIDs(ctx, bokat.RequestIDs{APIRequestID: info.id, TraceID: info.traceID})
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}
		rec.Header().Set("X-Request-Id", info.id)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.writeError(rec, r, &bokat.Error{Code: bokat.CodeInternalError, Detail: "An internal error occurred.",
					Err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())})
			}
			elapsed := time.Since(info.start)
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			if !info.test {
				s.metrics.ObserveRequest(r.Method, info.route, status, elapsed)
			}
			level := slog.LevelInfo
			if info.operator {
				level = slog.LevelDebug
			}
			// Typed attributes: the same record as key-value pairs would
			// make, without boxing each value on every request.
			s.log.LogAttrs(ctx, level, "request",
				slog.String("method", r.Method), slog.String("route", info.route), slog.Int("status", status),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.String("api_request_id", info.id), slog.String("trace_id", info.traceID), slog.String("client_id", info.clientID))
		}()
		next.ServeHTTP(rec, r)
	})
}

// traceIDFrom returns the trace id of a valid W3C traceparent header, or a
// fresh random one.
func traceIDFrom(traceparent string) string {
	if traceparent == "" {
		return randomTraceID()
	}
	parts := strings.Split(strings.TrimSpace(traceparent), "-")
	if len(parts) >= 4 && len(parts[0]) == 2 && parts[0] != "ff" && isLowerHex(parts[0]) &&
		len(parts[1]) == 32 && isLowerHex(parts[1]) && parts[1] != strings.Repeat("0", 32) &&
		len(parts[2]) == 16 && isLowerHex(parts[2]) && parts[2] != strings.Repeat("0", 16) &&
		len(parts[3]) == 2 && isLowerHex(parts[3]) && (parts[0] != "00" || len(parts) == 4) {
		return parts[1]
	}
	return randomTraceID()
}

// randomTraceID is a fresh random trace id: 32 lower-case hex digits.
func randomTraceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// handlerFunc is a route handler: it writes a success response or returns
// the error to answer.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// wrap is a route's transport: metadata, deprecation headers, body limit,
// the production partner gate and authentication. The operation step
// (operate) does the rest.
func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := requestInfoFrom(r.Context())
		info.route = rt.pattern
		info.contract = rt.contract
		info.legacy = rt.successor != ""
		if rt.successor != "" {
			w.Header().Set("Deprecation", "@1767225600") // 2026-01-01T00:00:00Z, RFC 9745 structured date
			w.Header().Add("Link", fmt.Sprintf("<%s%s>; rel=\"successor-version\"", s.baseURL, fillPattern(rt.successor, r.PathValue)))
			if s.sunset != "" {
				w.Header().Set("Sunset", s.sunset) // RFC 8594
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		if rt.needsPartner && s.production {
			ok, err := s.partnersConfigured(r.Context())
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			if !ok {
				s.writeError(w, r, &bokat.Error{Code: bokat.CodeProductionTokenNotConfigured,
					Detail: "No partner credential has been created on this server yet.", RetryAfter: time.Minute})
				return
			}
		}
		p, err := s.authenticate(r, rt)
		info.clientID = p.ClientID
		if err := s.operate(w, r, rt, p, err); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// operate is the operation step every way into a route takes once its
// transport has resolved the caller: a REST request (wrap) and an MCP tool
// call (Invoke). In order: the rate limit of the route's class (run after
// authentication so the principal is known; a request the transport
// refused — a bad credential, malformed tool arguments — still spends its
// caller's quota, so guessing is limited too), the transport's refusal,
// the route's scope, the text check of path values and stored headers, and
// the handler, with p in the context. It returns the error to answer.
func (s *Server) operate(w http.ResponseWriter, r *http.Request, rt route, p bokat.Principal, refused error) error {
	markMode(w.Header(), p, requestInfoFrom(r.Context()))
	if err := s.spendQuota(w, r, rt, p); err != nil {
		return err
	}
	if refused != nil {
		return refused
	}
	if rt.auth != authNone && rt.scope != "" && !p.Has(rt.scope) {
		return &bokat.Error{Code: bokat.CodeInsufficientScope,
			Detail: fmt.Sprintf("This operation requires the scope %s.", rt.scope),
			Extra:  map[string]any{"required_scope": string(rt.scope)}}
	}
	if err := checkRequestText(r, rt.pattern); err != nil {
		return err
	}
	ctx := auth.WithPrincipal(r.Context(), p)
	if p.Realm().Test() && s.testClock != nil {
		// The test owner's clock: its searches and booking writes take it
		// as now (docs/testing.md, "The test clock"). Live principals
		// have none, and read nothing here.
		off, err := s.testClock.Offset(ctx, p)
		if err != nil {
			return err
		}
		ctx = bokat.WithTestClock(ctx, off)
		requestInfoFrom(ctx).clock = off
	}
	return rt.handler(w, r.WithContext(ctx))
}

// authenticate resolves the caller of a request to rt and checks the
// credential against the route's requirements (operate checks the scope).
func (s *Server) authenticate(r *http.Request, rt route) (bokat.Principal, error) {
	p, err := s.auth.Authenticate(r.Context(), r, bokat.AudienceAPI)
	if errors.Is(err, auth.ErrInvalidCredential) {
		return p, &bokat.Error{Code: bokat.CodeUnauthorized, Detail: "The credential is missing, malformed, unknown, expired or revoked.", Err: err}
	}
	if err != nil {
		return p, err
	}
	if rt.auth == authNone {
		return p, nil
	}
	if !p.Authenticated() {
		if s.authOptional && !s.production && rt.auth != authPartnerOnly {
			return developmentPrincipal(), nil
		}
		return p, bokat.Errorf(bokat.CodeUnauthorized, "This operation requires a credential: Authorization: Bearer <token> or X-Service-Requests-Token.")
	}
	if rt.auth == authPartnerOnly && p.Kind != bokat.PrincipalPartner {
		return p, &bokat.Error{Code: bokat.CodeUnauthorized,
			Detail: "This deprecated path accepts only a partner credential (Authorization: Bearer <partner token> or X-Service-Requests-Token).",
			Err:    fmt.Errorf("%w: %s credential on a partner-only path", auth.ErrInvalidCredential, p.Kind)}
	}
	return p, nil
}

// ModeHeader is the response header that marks every answer to a test
// credential (issue 25); bodies are the contract's, unchanged.
const ModeHeader = "Bokat-Mode"

// markMode sets ModeHeader on a response to a test principal and keeps
// the request out of the metrics (info may be nil).
func markMode(h http.Header, p bokat.Principal, info *requestInfo) {
	if p.Realm().Test() {
		h.Set(ModeHeader, string(bokat.ModeTest))
		if info != nil {
			info.test = true
		}
	}
}
