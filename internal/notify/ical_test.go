package notify

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"

	"bokat"
)

// TestInvitationEscapesEveryTextValue renders invitations for a booking
// whose stored text holds what the edge now refuses (line breaks, bare CR,
// NUL) and what iCalendar must escape (backslash, semicolon, comma, quotes),
// and parses them with an independent implementation: one event, one
// attendee, no injected property, and every value read back as meant.
func TestInvitationEscapesEveryTextValue(t *testing.T) {
	t.Parallel()
	c := composer{organizer: "bokning@bokat.example", uidDomain: "bokat.example",
		now: func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }}
	b := Booking{
		ID: "bkg_ical", Status: "confirmed",
		ServiceLabelSV: "Byte av köksblandare; kök, bad",
		ProviderName:   "Rör \"Kraft\", Söder; AB\r\nATTENDEE:mailto:eve@example.com",
		ProviderEmail:  "provider@example.se",
		CustomerName:   "O'Brien, Greta\r\nATTENDEE;CN=Eve:mailto:eve@example.com\x00",
		CustomerEmail:  "greta@example.se",
		ServiceAddress: "Drottninggatan 1\\A; 113 45,\rStockholm\nLOCATION:elsewhere",
		SlotStart:      time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC),
		SlotEnd:        time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC),
		PriceSEK:       1495, TermsVersion: "v1", Locale: "sv-SE",
	}
	for _, recipient := range []string{bokat.RecipientCustomer, bokat.RecipientProvider} {
		t.Run(recipient, func(t *testing.T) {
			m, err := c.compose(b, string(bokat.EventBookingConfirmed), "", recipient)
			if err != nil {
				t.Fatal(err)
			}
			data := m.Calendar.Data
			for i, line := range strings.Split(strings.TrimSuffix(string(data), "\r\n"), "\r\n") {
				if strings.ContainsAny(line, "\r\n\x00") {
					t.Errorf("line %d holds a raw control character: %q", i+1, line)
				}
			}
			cal, err := ical.NewDecoder(bytes.NewReader(data)).Decode()
			if err != nil {
				t.Fatalf("the invitation does not parse: %v\n%s", err, data)
			}
			events := cal.Events()
			if len(events) != 1 {
				t.Fatalf("%d events, want 1\n%s", len(events), data)
			}
			e := events[0]
			attendees := e.Props.Values(ical.PropAttendee)
			if len(attendees) != 1 {
				t.Fatalf("%d attendees, want 1\n%s", len(attendees), data)
			}
			wantTo, wantCN := "mailto:greta@example.se", "O\u2019Brien Greta ATTENDEE CN=Eve mailto eve@example.com"
			if recipient == bokat.RecipientProvider {
				wantTo, wantCN = "mailto:provider@example.se", "Rör \u201dKraft\u201d Söder AB ATTENDEE mailto eve@example.com"
			}
			if attendees[0].Value != wantTo {
				t.Errorf("ATTENDEE = %q, want %q", attendees[0].Value, wantTo)
			}
			if got := attendees[0].Params.Get(ical.ParamCommonName); got != wantCN {
				t.Errorf("ATTENDEE CN = %q, want %q\n%s", got, wantCN, data)
			}
			if n := len(e.Props.Values(ical.PropLocation)); n != 1 {
				t.Errorf("%d LOCATION properties, want 1", n)
			}
			loc, err := e.Props.Text(ical.PropLocation)
			if err != nil {
				t.Fatal(err)
			}
			if want := "Drottninggatan 1\\A; 113 45, Stockholm LOCATION:elsewhere"; loc != want {
				t.Errorf("LOCATION = %q, want %q", loc, want)
			}
			summary, err := e.Props.Text(ical.PropSummary)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(summary, b.ServiceLabelSV) || strings.ContainsAny(summary, "\r\n\x00") {
				t.Errorf("SUMMARY = %q", summary)
			}
			desc, err := e.Props.Text(ical.PropDescription)
			if err != nil {
				t.Fatal(err)
			}
			if desc != bokat.CleanText(strings.TrimSpace(m.Text), true) || strings.ContainsAny(desc, "\r\x00") {
				t.Errorf("DESCRIPTION does not read back as the message text:\n%q", desc)
			}
		})
	}
}
