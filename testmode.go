package bokat

import "time"

// TestMessage is a message of the test realm as its owner reads it: what a
// test booking or request would have e-mailed, captured instead of sent
// (docs/testing.md). It names its recipient by role, never by address.
type TestMessage struct {
	ID             string
	BookingID      string
	RequestID      string
	EventType      string
	Recipient      string // RecipientCustomer or RecipientProvider
	Subject        string
	Body           string
	CalendarMethod string // the invitation's METHOD; empty without one
	CreatedAt      time.Time
}
