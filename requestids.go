package bokat

import "context"

// RequestIDs identify the API request that caused a change, so that
// background work it queued (notifications, deliveries) can be logged with
// the same ids the caller saw.
type RequestIDs struct {
	APIRequestID string
	TraceID      string
}

type requestIDsKey struct{}

// WithRequestIDs returns ctx carrying the request's ids.
func WithRequestIDs(ctx context.Context, ids RequestIDs) context.Context {
	return context.WithValue(ctx, requestIDsKey{}, ids)
}

// RequestIDsFrom returns the ids in ctx, or zero ids outside a request.
func RequestIDsFrom(ctx context.Context) RequestIDs {
	ids, _ := ctx.Value(requestIDsKey{}).(RequestIDs)
	return ids
}
