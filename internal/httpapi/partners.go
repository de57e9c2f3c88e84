package httpapi

import (
	"context"
	"sync/atomic"
	"time"

	"bokat"
)

// partnerCheckInterval is how long the server keeps the answer to "does an
// active partner credential exist?". Partner-only routes ask it before
// authentication on every call in production; keeping the answer spares the
// store one query per call (anonymous callers can send many), and a partner
// created or revoked by `bokat partner create` from another process is
// noticed within the interval.
const partnerCheckInterval = 10 * time.Second

// partnerGate holds the last answer of the store.
type partnerGate struct {
	last atomic.Pointer[partnerAnswer]
}

type partnerAnswer struct {
	exists bool
	until  time.Time
}

// partnersConfigured reports whether an active partner credential exists,
// asking the store at most once per partnerCheckInterval (a failed query is
// not kept).
func (s *Server) partnersConfigured(ctx context.Context) (bool, error) {
	now := s.now()
	if a := s.partners.last.Load(); a != nil && now.Before(a.until) {
		return a.exists, nil
	}
	n, err := s.store.PartnerClientCount(ctx)
	if err != nil {
		return false, err
	}
	s.partners.last.Store(&partnerAnswer{exists: n > 0, until: now.Add(partnerCheckInterval)})
	return n > 0, nil
}

// configurationState reports whether code is a 503 that answers a known
// state of the operator's configuration rather than a failure: it is
// announced once at start-up, not logged as an error per call.
func configurationState(code bokat.Code) bool {
	return code == bokat.CodeProductionTokenNotConfigured || code == bokat.CodeOptionSigningNotConfigured
}
