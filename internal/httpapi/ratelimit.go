package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"bokat"
	"bokat/internal/ratelimit"
)

// rateClass is a route's rate-limit class.
type rateClass int

const (
	// rateByMethod: GET and HEAD are reads, every other method writes.
	rateByMethod rateClass = iota
	rateSearch
	rateWrites
	rateReads
)

// RateLimits are the quotas of the operations' three classes, per principal
// (anonymous callers: per client IP), and of Control, per client IP. A
// disabled policy (zero quota) is not enforced.
type RateLimits struct {
	Search ratelimit.Policy
	Writes ratelimit.Policy
	Reads  ratelimit.Policy
	// Control is spent by what runs no operation: each MCP message other
	// than a tool call (initialize, tools/list, ping, notifications), GET
	// /readyz and GET /metrics. It is charged by client IP before any
	// credential is looked up, so a flood costs no credential lookup.
	Control ratelimit.Policy
}

// DefaultRateLimits are the product defaults: search 120/min, writes
// 30/min, reads 300/min, control 600/min.
func DefaultRateLimits() RateLimits {
	return RateLimits{
		Search:  ratelimit.Policy{Name: "search", Quota: 120, Window: time.Minute},
		Writes:  ratelimit.Policy{Name: "writes", Quota: 30, Window: time.Minute},
		Reads:   ratelimit.Policy{Name: "reads", Quota: 300, Window: time.Minute},
		Control: ratelimit.Policy{Name: "control", Quota: 600, Window: time.Minute},
	}
}

// policyOf returns the policy of a request to rt.
func (s *Server) policyOf(rt route, method string) ratelimit.Policy {
	class := rt.rate
	if class == rateByMethod {
		class = rateWrites
		if method == http.MethodGet || method == http.MethodHead {
			class = rateReads
		}
	}
	switch class {
	case rateSearch:
		return s.limits.Search
	case rateReads:
		return s.limits.Reads
	}
	return s.limits.Writes
}

// spendQuota spends one request of the caller's quota for the route's
// class, and returns the 429 rate_limited error to answer when it is spent
// (see spend).
func (s *Server) spendQuota(w http.ResponseWriter, r *http.Request, rt route, p bokat.Principal) error {
	policy := s.policyOf(rt, r.Method)
	if !policy.Enabled() {
		return nil // spend would not look at the key
	}
	return s.spend(w, r, policy, s.rateKey(r, p))
}

// allowRequest is spendQuota for endpoints outside the operations: it
// answers the 429 itself and returns false.
func (s *Server) allowRequest(w http.ResponseWriter, r *http.Request, rt route, p bokat.Principal) bool {
	if err := s.spendQuota(w, r, rt, p); err != nil {
		s.writeError(w, r, err)
		return false
	}
	return true
}

// allowControl spends n requests of the client IP's control quota (see
// RateLimits.Control), answering the 429 itself when it is spent.
func (s *Server) allowControl(w http.ResponseWriter, r *http.Request, n int) bool {
	key := s.rateKey(r, bokat.Principal{})
	for range n {
		if err := s.spend(w, r, s.limits.Control, key); err != nil {
			s.writeError(w, r, err)
			return false
		}
	}
	return true
}

// spend spends one request of key's quota under policy. It sets the
// RateLimit-Policy and RateLimit headers, and when the quota is spent
// returns the 429 rate_limited error (with Retry-After). When the limiter
// fails the request goes through unchecked (fail open), with a warning (at
// most one per 10 s) and a metric.
func (s *Server) spend(w http.ResponseWriter, r *http.Request, policy ratelimit.Policy, key string) error {
	if !policy.Enabled() {
		return nil
	}
	d, err := s.limiter.Allow(r.Context(), policy, key)
	if err != nil {
		s.metrics.RateLimitBackendError()
		now := s.now().UnixNano()
		if last := s.limiterWarned.Load(); now-last > int64(10*time.Second) && s.limiterWarned.CompareAndSwap(last, now) {
			s.log.WarnContext(r.Context(), "rate limiter unavailable: requests pass unchecked", "error", err.Error())
		}
		return nil
	}
	h := w.Header()
	h.Set("RateLimit-Policy", ratelimit.PolicyHeader(policy))
	h.Set("RateLimit", ratelimit.StateHeader(policy, d))
	if d.Allowed {
		return nil
	}
	if !requestInfoFrom(r.Context()).test {
		// A test credential's refusals are test activity: never counted
		// in the live metrics (issue 25).
		s.metrics.RateLimited(policy.Name)
	}
	return &bokat.Error{
		Code: bokat.CodeRateLimited,
		Detail: fmt.Sprintf("The %s quota of %d requests per %s is spent.",
			policy.Name, policy.Quota, windowLabel(policy.Window)),
		SafeNextStep: "Wait for the Retry-After seconds, then retry; retry writes only with the same idempotency key.",
		RetryAfter:   max(d.RetryAfter, time.Second),
	}
}

func windowLabel(d time.Duration) string {
	switch d {
	case time.Second:
		return "second"
	case time.Minute:
		return "minute"
	case time.Hour:
		return "hour"
	}
	return d.String()
}

// rateKey names whose quota a request spends: an authenticated principal's
// owner key (a partner or OAuth client, a provider token), or for anonymous
// callers their client IP (IPv6: the /64).
func (s *Server) rateKey(r *http.Request, p bokat.Principal) string {
	if p.Kind == bokat.PrincipalPartner || p.Kind == bokat.PrincipalOAuth || p.Kind == bokat.PrincipalProvider {
		return "principal:" + string(p.Kind) + ":" + p.OwnerKey()
	}
	ip := s.clientIP(r)
	if !ip.IsValid() {
		return "ip:unknown"
	}
	if ip.Is6() {
		return "ip:" + netip.PrefixFrom(ip, 64).Masked().String()
	}
	return "ip:" + ip.String()
}

// clientIP is the peer's address, or, when the peer is a trusted proxy, the
// right-most X-Forwarded-For address that is not a trusted proxy.
func (s *Server) clientIP(r *http.Request) netip.Addr {
	addr := parseAddr(r.RemoteAddr)
	if !addr.IsValid() || !s.trustedProxy(addr) {
		return addr
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop := parseAddr(strings.TrimSpace(hops[i]))
		if !hop.IsValid() {
			break
		}
		addr = hop
		if !s.trustedProxy(hop) {
			break
		}
	}
	return addr
}

func (s *Server) trustedProxy(a netip.Addr) bool {
	for _, p := range s.trustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseAddr reads "ip", "ip:port" or "[ipv6]:port"; IPv4-mapped IPv6
// addresses become IPv4.
func parseAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// ParseTrustedProxies reads a comma-separated list of CIDR prefixes or
// single addresses.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR prefix", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
