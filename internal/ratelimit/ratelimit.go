// Package ratelimit decides whether a caller may make one more request under
// a quota policy ("120 requests per minute"). A caller may spend its whole
// quota in one burst; the quota then refills evenly over the window (a token
// bucket, or its Redis twin GCRA). Two limiters share one interface: Memory,
// in the process, and redislimit.Limiter (a package of its own, so that
// only the program that configures Redis links its client), shared by
// every instance that uses the same Redis server and key prefix.
//
// The package also renders the IETF RateLimit header fields
// (draft-ietf-httpapi-ratelimit-headers-10/11): RateLimit-Policy and
// RateLimit.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Policy is a quota: Quota requests per Window, all of which may be spent
// at once. Name identifies it in the RateLimit header fields and in keys.
type Policy struct {
	Name   string
	Quota  int
	Window time.Duration
}

// Enabled reports whether the policy limits anything; a zero quota means
// the class is not limited.
func (p Policy) Enabled() bool { return p.Quota > 0 && p.Window > 0 }

// String renders the policy in the form ParseRate reads, e.g. "120/1m0s".
func (p Policy) String() string {
	if !p.Enabled() {
		return "off"
	}
	return fmt.Sprintf("%d/%s", p.Quota, p.Window)
}

// Decision is the outcome of one Allow call.
type Decision struct {
	Allowed bool
	// Remaining is how many more requests the caller may make right now.
	Remaining int
	// RetryAfter, when the request was refused, is the time until one more
	// request will be allowed.
	RetryAfter time.Duration
	// Reset is the time until the whole quota is available again.
	Reset time.Duration
}

// Limiter spends one request of key's quota under policy p. An error means
// the limiter could not decide (e.g. Redis is unreachable); callers choose
// whether to fail open.
type Limiter interface {
	Allow(ctx context.Context, p Policy, key string) (Decision, error)
}

// ErrUnavailable marks a limiter backend that cannot be reached.
var ErrUnavailable = errors.New("rate limiter unavailable")

// ParseRate reads a rate such as "120/min", "30/m", "300/minute", "5/10s",
// "1000/h" or "2/1m30s" into a policy named name. "off" or "0" disables the
// policy.
func ParseRate(name, s string) (Policy, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "0" {
		return Policy{Name: name}, nil
	}
	count, per, ok := strings.Cut(s, "/")
	if !ok {
		return Policy{}, fmt.Errorf("rate %q: want N/period, e.g. 120/min", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil || n < 0 {
		return Policy{}, fmt.Errorf("rate %q: %q is not a whole number of requests", s, count)
	}
	var window time.Duration
	switch strings.ToLower(strings.TrimSpace(per)) {
	case "s", "sec", "second":
		window = time.Second
	case "m", "min", "minute":
		window = time.Minute
	case "h", "hour":
		window = time.Hour
	default:
		window, err = time.ParseDuration(strings.TrimSpace(per))
		if err != nil || window <= 0 {
			return Policy{}, fmt.Errorf("rate %q: period %q must be s, min, h or a positive duration such as 10s", s, per)
		}
	}
	if window < time.Second || window%time.Second != 0 {
		return Policy{}, fmt.Errorf("rate %q: the period must be a whole number of seconds", s)
	}
	if n == 0 {
		return Policy{Name: name}, nil
	}
	return Policy{Name: name, Quota: n, Window: window}, nil
}

// PolicyHeader renders the RateLimit-Policy field of p, e.g.
// `"search";q=120;w=60`.
func PolicyHeader(p Policy) string {
	// What fmt.Sprintf("%q;q=%d;w=%d", ...) writes (a test compares them),
	// without fmt on every request.
	return strconv.Quote(p.Name) + ";q=" + strconv.FormatInt(int64(p.Quota), 10) + ";w=" + strconv.FormatInt(int64(p.Window/time.Second), 10)
}

// StateHeader renders the RateLimit field of a decision under p, e.g.
// `"search";r=0;t=12`: r is the remaining quota, t the seconds (rounded up)
// until the whole quota is available again.
func StateHeader(p Policy, d Decision) string {
	// What fmt.Sprintf("%q;r=%d;t=%d", ...) writes (a test compares them).
	return strconv.Quote(p.Name) + ";r=" + strconv.FormatInt(int64(max(d.Remaining, 0)), 10) + ";t=" + strconv.FormatInt(CeilSeconds(d.Reset), 10)
}

// CeilSeconds rounds a duration up to whole seconds (never negative).
func CeilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(d.Seconds()))
}
