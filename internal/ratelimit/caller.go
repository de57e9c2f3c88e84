package ratelimit

import "context"

type callerKey struct{}

// WithCaller returns ctx carrying the rate-limit key of the request's caller
// (for anonymous callers "ip:<address>", an IPv6 address as its /64), as
// the HTTP layer resolved it, trusted proxies included. Handlers that spend
// quotas of their own (the OAuth endpoints) read it with Caller.
func WithCaller(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, callerKey{}, key)
}

// Caller returns the caller key of ctx, or "ip:unknown" when none was set.
func Caller(ctx context.Context) string {
	if k, ok := ctx.Value(callerKey{}).(string); ok && k != "" {
		return k
	}
	return "ip:unknown"
}
