package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/testrealm"
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

// wireTestClock is an owner's test clock as GET /v1/test/clock and POST
// /v1/test/clock/advance answer it.
type wireTestClock struct {
	OK               bool   `json:"ok"`
	Now              string `json:"now"`
	OffsetSeconds    int64  `json:"offset_seconds"`
	MaxOffsetSeconds int64  `json:"max_offset_seconds"`
}

// testClockAdvanceWire is the body of POST /v1/test/clock/advance: one of
// seconds and to.
type testClockAdvanceWire struct {
	Seconds *int64     `json:"seconds"`
	To      *time.Time `json:"to"`
}

// handleTestClock answers the caller's test clock.
func (s *Server) handleTestClock(w http.ResponseWriter, r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	if err := requireTest(p); err != nil {
		return err
	}
	if s.testClock == nil {
		return fmt.Errorf("test clock: none configured")
	}
	st, err := s.testClock.Read(r.Context(), p)
	if err != nil {
		return err
	}
	s.writeTestClock(w, r, st)
	return nil
}

// handleTestClockAdvance moves the caller's test clock forward.
func (s *Server) handleTestClockAdvance(w http.ResponseWriter, r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	if err := requireTest(p); err != nil {
		return err
	}
	if s.testClock == nil {
		return fmt.Errorf("test clock: none configured")
	}
	var req testClockAdvanceWire
	if err := s.decode(r, &req); err != nil {
		return err
	}
	var (
		by time.Duration
		to time.Time
	)
	if req.Seconds != nil {
		by = time.Duration(*req.Seconds) * time.Second
	}
	if req.To != nil {
		to = *req.To
	}
	st, err := s.testClock.Advance(r.Context(), p, by, to)
	if err != nil {
		return err
	}
	// The answer's server_time is on the clock just moved.
	requestInfoFrom(r.Context()).clock = st.Offset
	s.writeTestClock(w, r, st)
	return nil
}

func (s *Server) writeTestClock(w http.ResponseWriter, r *http.Request, st testrealm.ClockState) {
	s.writeJSON(w, r, http.StatusOK, wireTestClock{OK: true, Now: st.Now.UTC().Format(time.RFC3339Nano),
		OffsetSeconds: int64(st.Offset.Seconds()), MaxOffsetSeconds: int64(testrealm.MaxClockOffset.Seconds())})
}
