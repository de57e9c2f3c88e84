package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/outbox"
	"bokat/internal/webhook"
)

// Events reads the caller's events for GET /v1/events.
type Events interface {
	// OwnerEvents returns the owner's events of the realm mode, oldest
	// first, created after the event after (empty: from the first), at
	// most limit; an unknown after is bokat.ErrNotFound.
	OwnerEvents(ctx context.Context, clientID, userID string, mode bokat.Mode, after string, limit int) ([]outbox.Event, error)
}

// eventsLimitDefault is the page size of GET /v1/events without limit.
const eventsLimitDefault = 50

type wireEventList struct {
	OK     bool              `json:"ok"`
	Events []json.RawMessage `json:"events"`
	// NextAfter is the cursor of the next page: the last event's outbox id
	// (the given after when the page is empty).
	NextAfter string `json:"next_after,omitempty"`
	HasMore   bool   `json:"has_more"`
}

// handleEvents lists the caller's events of its realm, oldest first, as
// the bodies webhook deliveries carry (their id is the event's outbox id).
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for k, v := range q {
		if (k != "limit" && k != "after") || len(v) != 1 {
			return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "Only one limit and one after query parameter are accepted.",
				Issues: []string{"query: only limit and after are accepted, each at most once"}}
		}
	}
	limit := eventsLimitDefault
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > 100 {
			return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "limit must be an integer from 1 to 100.",
				Issues: []string{"limit: must be an integer from 1 to 100"}}
		}
		limit = n
	}
	if s.events == nil {
		return fmt.Errorf("events: no reader configured")
	}
	p := auth.PrincipalFrom(r.Context())
	after := q.Get("after")
	evs, err := s.events.OwnerEvents(r.Context(), p.ClientID, p.UserID, p.Realm(), after, limit+1)
	if errors.Is(err, bokat.ErrNotFound) {
		return &bokat.Error{Code: bokat.CodeWebhookEventNotFound, Detail: "after names no event of this credential."}
	}
	if err != nil {
		return err
	}
	out := wireEventList{OK: true, Events: []json.RawMessage{}, NextAfter: after, HasMore: len(evs) > limit}
	if out.HasMore {
		evs = evs[:limit]
	}
	for _, ev := range evs {
		body, err := webhook.Body(outbox.ClaimedDelivery{WebhookID: ev.ID, OutboxID: ev.ID, EventType: ev.EventType,
			OccurredAt: ev.OccurredAt, CreatedAt: ev.CreatedAt, Payload: ev.Payload})
		if err != nil {
			return fmt.Errorf("event %s: %w", ev.ID, err)
		}
		out.Events = append(out.Events, body)
		out.NextAfter = ev.ID
	}
	s.writeJSON(w, r, http.StatusOK, out)
	return nil
}
