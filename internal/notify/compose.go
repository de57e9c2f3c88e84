package notify

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"

	"bokat"
	"bokat/internal/schedule"
)

// composer renders the messages of booking events.
type composer struct {
	// organizer is the address invitations come from.
	organizer string
	// uidDomain qualifies UIDs (the provider calendar feed's domain).
	uidDomain string
	now       func() time.Time
}

// supported reports whether the event type has messages.
func supported(eventType string) bool {
	switch bokat.EventType(eventType) {
	case bokat.EventBookingConfirmed, bokat.EventBookingRescheduled, bokat.EventBookingCancelled:
		return true
	}
	return false
}

// compose returns the message about b for the event and recipient.
func (c composer) compose(b Booking, eventType, recipient string) (Message, error) {
	if !supported(eventType) {
		return Message{}, fmt.Errorf("no message for event type %q", eventType)
	}
	ev := bokat.EventType(eventType)
	var m Message
	var err error
	switch recipient {
	case bokat.RecipientCustomer:
		m = c.customer(b, ev)
		m.To, m.ToName = b.CustomerEmail, b.CustomerName
	case bokat.RecipientProvider:
		m = c.provider(b, ev)
		m.To, m.ToName = b.ProviderEmail, b.ProviderName
	default:
		return Message{}, fmt.Errorf("unknown recipient %q", recipient)
	}
	m.Kind = eventType + "/" + recipient
	m.Calendar, err = c.calendar(b, ev, m)
	return m, err
}

func isEnglish(locale string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(locale)), "en")
}

// lines writes "label: value" rows, leaving out empty values.
type lines struct{ strings.Builder }

func (l *lines) row(label, value string) {
	if strings.TrimSpace(value) == "" {
		return
	}
	fmt.Fprintf(&l.Builder, "%s: %s\n", label, value)
}

func (l *lines) para(s string) {
	l.WriteString(s)
	l.WriteString("\n\n")
}

func slotLabel(b Booking, locale string) string {
	return schedule.SlotLabel(schedule.Interval{Start: b.SlotStart, End: b.SlotEnd}, locale)
}

func priceLabel(sek int, english bool) string {
	digits := strconv.Itoa(sek)
	sep := " "
	if english {
		sep = ","
	}
	var out []byte
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			out = append(out, sep...)
		}
		out = append(out, digits[i])
	}
	if english {
		return "SEK " + string(out)
	}
	return string(out) + " kr"
}

func instantLabel(t time.Time) string {
	return t.In(schedule.Stockholm()).Format("2006-01-02 15:04")
}

func (c composer) customer(b Booking, ev bokat.EventType) Message {
	en := isEnglish(b.Locale)
	locale := "sv-SE"
	service := b.ServiceLabelSV
	if en {
		locale = "en-GB"
		if b.ServiceLabelEN != "" {
			service = b.ServiceLabelEN
		}
	}
	slot := slotLabel(b, locale)
	var subject, lead, tail string
	var body lines
	if en {
		greeting := "Hello"
		if b.CustomerName != "" {
			greeting += " " + b.CustomerName
		}
		switch ev {
		case bokat.EventBookingConfirmed:
			subject = "Booking confirmed: " + service + ", " + slot
			lead = "your booking is confirmed."
			tail = "A calendar invitation is attached. To cancel or change the time, use the service you booked through."
		case bokat.EventBookingRescheduled:
			subject = "New time for your booking: " + service + ", " + slot
			lead = "your booking has moved to a new time. The previous time no longer applies."
			tail = "The attached calendar invitation updates the visit in your calendar."
		case bokat.EventBookingCancelled:
			subject = "Booking cancelled: " + service + ", " + slot
			lead = "your booking is cancelled."
			tail = "The attached calendar file removes the visit from your calendar."
		}
		body.para(greeting + ",")
		body.para(lead)
		body.row("Service", service)
		body.row("Time", slot)
		body.row("Address", b.ServiceAddress)
		body.row("Moving to", b.DestinationAddress)
		body.row("Provider", b.ProviderName)
		body.row("Price", priceLabel(b.PriceSEK, true)+" (fixed price under the terms)")
		body.row("Terms", strings.TrimSpace(b.TermsVersion+" "+b.TermsURL))
		body.row("Booking reference", b.ID)
		if ev == bokat.EventBookingCancelled && !b.CancelledAt.IsZero() {
			body.row("Cancelled", instantLabel(b.CancelledAt)+" (Stockholm time)")
		}
		body.WriteString("\n")
		if ev != bokat.EventBookingCancelled {
			body.row("Provider's phone", b.ProviderPhone)
			body.row("Provider's e-mail", b.ProviderEmail)
			body.WriteString("\n")
		}
		body.para(tail)
		body.WriteString("Kind regards\nBokat\n")
		return Message{Subject: subject, Text: body.String()}
	}
	greeting := "Hej"
	if b.CustomerName != "" {
		greeting += " " + b.CustomerName
	}
	switch ev {
	case bokat.EventBookingConfirmed:
		subject = "Bokningsbekräftelse: " + service + ", " + slot
		lead = "din bokning är bekräftad."
		tail = "En kalenderinbjudan finns bifogad. Vill du avboka eller byta tid gör du det via tjänsten där du bokade."
	case bokat.EventBookingRescheduled:
		subject = "Ny tid för din bokning: " + service + ", " + slot
		lead = "din bokning har flyttats till en ny tid. Den tidigare tiden gäller inte längre."
		tail = "Den bifogade kalenderinbjudan uppdaterar besöket i din kalender."
	case bokat.EventBookingCancelled:
		subject = "Avbokning: " + service + ", " + slot
		lead = "din bokning är avbokad."
		tail = "Den bifogade kalenderfilen tar bort besöket ur din kalender."
	}
	body.para(greeting + ",")
	body.para(lead)
	body.row("Tjänst", service)
	body.row("Tid", slot)
	body.row("Adress", b.ServiceAddress)
	body.row("Flytt till", b.DestinationAddress)
	body.row("Utförare", b.ProviderName)
	body.row("Pris", priceLabel(b.PriceSEK, false)+" (fast pris enligt villkoren)")
	body.row("Villkor", strings.TrimSpace(b.TermsVersion+" "+b.TermsURL))
	body.row("Bokningsnummer", b.ID)
	if ev == bokat.EventBookingCancelled && !b.CancelledAt.IsZero() {
		body.row("Avbokad", instantLabel(b.CancelledAt)+" (svensk tid)")
	}
	body.WriteString("\n")
	if ev != bokat.EventBookingCancelled {
		body.row("Utförarens telefon", b.ProviderPhone)
		body.row("Utförarens e-post", b.ProviderEmail)
		body.WriteString("\n")
	}
	body.para(tail)
	body.WriteString("Vänliga hälsningar\nBokat\n")
	return Message{Subject: subject, Text: body.String()}
}

// cancelReasonsSV names the contract's cancellation reasons in Swedish.
var cancelReasonsSV = map[string]string{
	"customer_changed_mind":    "kunden har ändrat sig",
	"timing_no_longer_works":   "tiden passar inte längre",
	"booked_elsewhere":         "kunden har bokat någon annan",
	"service_no_longer_needed": "tjänsten behövs inte längre",
	"other":                    "annat",
}

// provider renders the message to the provider, in Swedish: the job's
// details, the customer's contact details included.
func (c composer) provider(b Booking, ev bokat.EventType) Message {
	slot := slotLabel(b, "sv-SE")
	service := b.ServiceLabelSV
	var subject, lead, tail string
	switch ev {
	case bokat.EventBookingConfirmed:
		subject = "Nytt bokat uppdrag: " + service + ", " + slot
		lead = "ett nytt uppdrag har bokats hos er via Bokat."
		tail = "Kontakta kunden om något behöver stämmas av före besöket. Kunduppgifterna får bara användas för det här uppdraget."
	case bokat.EventBookingRescheduled:
		subject = "Ändrad tid för uppdrag: " + service + ", " + slot
		lead = "uppdraget har flyttats till en ny tid. Den tidigare tiden gäller inte längre."
		tail = "Kunduppgifterna får bara användas för det här uppdraget."
	case bokat.EventBookingCancelled:
		subject = "Avbokat uppdrag: " + service + ", " + slot
		lead = "kunden har avbokat uppdraget. Besöket ska inte genomföras."
		tail = "Den bifogade kalenderfilen tar bort besöket ur er kalender."
	}
	var body lines
	greeting := "Hej"
	if b.ProviderName != "" {
		greeting += " " + b.ProviderName
	}
	body.para(greeting + ",")
	body.para(lead)
	body.row("Tjänst", service)
	body.row("Tid", slot)
	body.row("Adress", b.ServiceAddress)
	body.row("Flytt till", b.DestinationAddress)
	body.row("Pris", priceLabel(b.PriceSEK, false)+" (fast pris)")
	body.row("Villkor", strings.TrimSpace(b.TermsVersion+" "+b.TermsURL))
	body.row("Bokningsnummer", b.ID)
	if ev == bokat.EventBookingCancelled {
		body.row("Avbokad", instantLabel(b.CancelledAt))
		body.row("Orsak", cancelReasonsSV[b.CancelReason])
	}
	body.WriteString("\n")
	body.row("Kund", b.CustomerName)
	body.row("Telefon", b.CustomerPhone)
	body.row("E-post", b.CustomerEmail)
	body.WriteString("\n")
	body.para(tail)
	body.WriteString("Vänliga hälsningar\nBokat\n")
	return Message{Subject: subject, Text: body.String()}
}

// uid is the booking's stable iCalendar UID.
func (c composer) uid(bookingID string) string {
	return bookingID + "@" + c.uidDomain
}

// calendar renders the invitation of message m: METHOD:REQUEST with STATUS
// CONFIRMED for a confirmation or new time, METHOD:CANCEL with STATUS
// CANCELLED for a cancellation; the booking's UID and SEQUENCE; UTC times;
// CRLF line endings and folded lines as RFC 5545 requires.
func (c composer) calendar(b Booking, ev bokat.EventType, m Message) (*Calendar, error) {
	method, status := ics.MethodRequest, ics.ObjectStatusConfirmed
	if ev == bokat.EventBookingCancelled {
		method, status = ics.MethodCancel, ics.ObjectStatusCancelled
	}
	if b.SlotStart.IsZero() || !b.SlotEnd.After(b.SlotStart) {
		return nil, fmt.Errorf("booking %s has no valid slot", b.ID)
	}
	cal := ics.NewCalendarFor("Bokat")
	cal.SetProductId("-//Bokat//Bokningar//SV")
	cal.SetMethod(method)
	e := cal.AddEvent(c.uid(b.ID))
	e.SetDtStampTime(c.now())
	e.SetSequence(b.Sequence)
	e.SetStartAt(b.SlotStart)
	e.SetEndAt(b.SlotEnd)
	e.SetStatus(status)
	summary := b.ServiceLabelSV
	if m.Kind != "" && strings.HasSuffix(m.Kind, "/"+bokat.RecipientCustomer) && isEnglish(b.Locale) && b.ServiceLabelEN != "" {
		summary = b.ServiceLabelEN
	}
	if b.ProviderName != "" && strings.HasSuffix(m.Kind, "/"+bokat.RecipientCustomer) {
		summary += " – " + b.ProviderName
	}
	e.SetSummary(summary)
	if b.ServiceAddress != "" {
		e.SetLocation(b.ServiceAddress)
	}
	e.SetDescription(strings.TrimSpace(m.Text))
	e.SetOrganizer(c.organizer, ics.WithCN("Bokat"))
	attendee := []ics.PropertyParameter{ics.WithRSVP(false)}
	if m.ToName != "" {
		attendee = append(attendee, ics.WithCN(m.ToName))
	}
	if m.To != "" {
		e.AddAttendee(m.To, attendee...)
	}
	return &Calendar{Method: string(method), Data: []byte(cal.Serialize(ics.WithNewLineWindows))}, nil
}
