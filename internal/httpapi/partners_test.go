package httpapi

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bokat"
	"bokat/internal/clocktest"
)

// countingStore is the real store, counting the partner queries.
type countingStore struct {
	Store
	partnerQueries atomic.Int64
}

func (c *countingStore) PartnerClientCount(ctx context.Context) (int, error) {
	c.partnerQueries.Add(1)
	return c.Store.PartnerClientCount(ctx)
}

// Anonymous legacy request creation before any partner exists answers 503
// production_token_not_configured without an ERROR line per call and
// without a store query per call; a partner created later is noticed after
// partnerCheckInterval.
func TestNoPartnerYetIsAnsweredWithoutLogFloodOrQueryPerCall(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now())
	counting := &countingStore{}
	e := sqliteEnv(t, func(c *envConfig) {
		c.Production, c.Now = true, clock.Now
		counting.Store = c.Store
		c.Store = counting
	})
	revokeAllPartners(t, e)
	const calls = 40
	for i := range calls {
		r := e.do(request{Method: "POST", Path: "/api/public/requests", Body: validRequestBody()})
		checkLegacyError(t, r, 503, string(bokat.CodeProductionTokenNotConfigured))
		if r.Header.Get("Retry-After") == "" {
			t.Fatalf("call %d: 503 without Retry-After", i+1)
		}
	}
	if n := counting.partnerQueries.Load(); n != 1 {
		t.Errorf("%d partner queries for %d calls within %v, want 1", n, calls, partnerCheckInterval)
	}
	if logs := e.logs.String(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("an ERROR was logged for a configuration state:\n%s", logs)
	}

	token := e.partner("first partner", bokat.ScopeRequestsCreate)
	clock.Advance(partnerCheckInterval)
	r := e.do(request{Method: "POST", Path: "/api/public/requests", Body: validRequestBody(), Header: bearer(token)})
	if r.Status != 201 {
		t.Fatalf("with a partner, after the interval: %d %s", r.Status, r.Body)
	}
	if n := counting.partnerQueries.Load(); n != 2 {
		t.Errorf("%d partner queries, want 2 (one per interval)", n)
	}
}
