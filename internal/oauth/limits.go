package oauth

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"bokat/internal/ratelimit"
)

// Limits are the authorization server's budgets, spent on the limiter the
// API uses (in process, or shared through Redis). Keys are the caller's
// address as the HTTP layer resolved it (ratelimit.Caller: trusted proxies
// honoured, IPv6 per /64), an authenticated client's id, or a keyed hash of
// an e-mail address. A zero policy is not enforced.
type Limits struct {
	// Pages: requests to the browser pages (authorize, sign-in, code,
	// sign-out), per client IP.
	Pages ratelimit.Policy
	// Token: token and revocation requests per authenticated client.
	Token ratelimit.Policy
	// AuthFailuresIP and AuthFailuresClient: failed client
	// authentications at the token and revocation endpoints, per client IP
	// and per client id. Once either is spent, requests from that address,
	// or for that client id, are refused before their credentials are
	// checked.
	AuthFailuresIP     ratelimit.Policy
	AuthFailuresClient ratelimit.Policy
	// SignInIP, SignInAddress and SignInGlobal: sign-in codes sent per
	// client IP, per (e-mail address, client IP) and overall. Beside them
	// the store bounds the codes sent to one address from anywhere
	// (SignInSendLimit per SignInSendWindow).
	SignInIP      ratelimit.Policy
	SignInAddress ratelimit.Policy
	SignInGlobal  ratelimit.Policy
	// Register: dynamic client registrations (RFC 7591) per client IP.
	Register ratelimit.Policy
}

// DefaultLimits are the product defaults.
func DefaultLimits() Limits {
	return Limits{
		Pages:              ratelimit.Policy{Name: "oauth-pages", Quota: 120, Window: time.Minute},
		Token:              ratelimit.Policy{Name: "oauth-token", Quota: 600, Window: time.Minute},
		AuthFailuresIP:     ratelimit.Policy{Name: "oauth-auth-failures-ip", Quota: 10, Window: time.Minute},
		AuthFailuresClient: ratelimit.Policy{Name: "oauth-auth-failures-client", Quota: 30, Window: time.Minute},
		SignInIP:           ratelimit.Policy{Name: "signin-ip", Quota: 20, Window: time.Hour},
		SignInAddress:      ratelimit.Policy{Name: "signin-address", Quota: 5, Window: time.Hour},
		SignInGlobal:       ratelimit.Policy{Name: "signin-global", Quota: 1000, Window: time.Hour},
		Register:           ratelimit.Policy{Name: "oauth-register", Quota: 20, Window: time.Hour},
	}
}

// Metrics counts refusals and limiter failures (*telemetry.Metrics).
type Metrics interface {
	RateLimited(policy string)
	RateLimitBackendError()
}

// Limiter is what the server needs of a rate limiter: spend a request, and
// tell without spending whether a failure budget has one left.
type Limiter = ratelimit.Peeker

// spend spends one request of key under p and returns zero when it is
// allowed, else the time until it will be (at least a second). When the
// limiter fails the request passes (fail open, as the API does) with a
// warning at most every 10 s.
func (s *Server) spend(ctx context.Context, p ratelimit.Policy, key string) time.Duration {
	if s.limiter == nil || !p.Enabled() {
		return 0
	}
	return s.decided(ctx, p)(s.limiter.Allow(ctx, p, key))
}

// peek is spend without spending: whether key has a request left under p.
func (s *Server) peek(ctx context.Context, p ratelimit.Policy, key string) time.Duration {
	if s.limiter == nil || !p.Enabled() {
		return 0
	}
	return s.decided(ctx, p)(s.limiter.Peek(ctx, p, key))
}

func (s *Server) decided(ctx context.Context, p ratelimit.Policy) func(ratelimit.Decision, error) time.Duration {
	return func(d ratelimit.Decision, err error) time.Duration {
		if err != nil {
			if s.metrics != nil {
				s.metrics.RateLimitBackendError()
			}
			now := s.now().UnixNano()
			if last := s.limiterWarned.Load(); now-last > int64(10*time.Second) && s.limiterWarned.CompareAndSwap(last, now) {
				s.log.WarnContext(ctx, "rate limiter unavailable: OAuth requests pass unchecked", "error", err.Error())
			}
			return 0
		}
		if d.Allowed {
			return 0
		}
		if s.metrics != nil {
			s.metrics.RateLimited(p.Name)
		}
		return max(d.RetryAfter, time.Second)
	}
}

// setRetryAfter sets the Retry-After header in whole seconds, rounded up.
func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", fmt.Sprint(ratelimit.CeilSeconds(d)))
}
