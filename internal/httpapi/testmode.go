package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"bokat"
	"bokat/internal/auth"
)

// TestMessages reads the messages captured for the test realm's owners.
type TestMessages interface {
	// TestMessages returns the owner's captured messages, oldest first,
	// at most limit.
	TestMessages(ctx context.Context, clientID, userID string, limit int) ([]bokat.TestMessage, error)
}

// maxTestMessages is how many captured messages one answer lists.
const maxTestMessages = 100

type wireTestMessage struct {
	ID             string `json:"id"`
	BookingID      string `json:"booking_id,omitempty"`
	RequestID      string `json:"request_id,omitempty"`
	EventType      string `json:"event_type"`
	Recipient      string `json:"recipient"`
	Subject        string `json:"subject"`
	Body           string `json:"body"`
	CalendarMethod string `json:"calendar_method,omitempty"`
	CreatedAt      string `json:"created_at"`
}

type wireTestMessageList struct {
	OK       bool              `json:"ok"`
	Messages []wireTestMessage `json:"messages"`
}

// requireTest refuses a principal of the live realm: the /v1/test routes
// exist for test credentials only.
func requireTest(p bokat.Principal) error {
	if !p.Realm().Test() {
		return bokat.Errorf(bokat.CodeForbidden, "This route takes a test credential (a token starting with %s).",
			bokat.PartnerTestTokenPrefix)
	}
	return nil
}

// handleTestMessages lists the messages captured for the caller's test
// bookings and requests, oldest first.
func (s *Server) handleTestMessages(w http.ResponseWriter, r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	if err := requireTest(p); err != nil {
		return err
	}
	if s.testMessages == nil {
		return fmt.Errorf("test messages: no reader configured")
	}
	msgs, err := s.testMessages.TestMessages(r.Context(), p.ClientID, p.UserID, maxTestMessages)
	if err != nil {
		return err
	}
	out := wireTestMessageList{OK: true, Messages: make([]wireTestMessage, len(msgs))}
	for i, m := range msgs {
		out.Messages[i] = wireTestMessage{ID: m.ID, BookingID: m.BookingID, RequestID: m.RequestID, EventType: m.EventType,
			Recipient: m.Recipient, Subject: m.Subject, Body: m.Body, CalendarMethod: m.CalendarMethod,
			CreatedAt: m.CreatedAt.UTC().Format(time.RFC3339Nano)}
	}
	s.writeJSON(w, r, http.StatusOK, out)
	return nil
}
