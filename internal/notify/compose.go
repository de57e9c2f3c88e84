package notify

import (
	"fmt"
	"math"
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

// compose returns the message about b for the event, whose data.reason is
// reason, and the recipient.
func (c composer) compose(b Booking, eventType, reason, recipient string) (Message, error) {
	if !supported(eventType) {
		return Message{}, fmt.Errorf("no message for event type %q", eventType)
	}
	ev := bokat.EventType(eventType)
	byProvider := ev == bokat.EventBookingCancelled && reason == bokat.ReasonProviderCancelled
	var m Message
	var err error
	switch recipient {
	case bokat.RecipientCustomer:
		m = c.customer(b, ev, byProvider)
		m.To, m.ToName = b.CustomerEmail, b.CustomerName
	case bokat.RecipientProvider:
		m = c.provider(b, ev, byProvider)
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

// customerWords are the texts of a customer message in one language.
type customerWords struct {
	english                            bool
	locale, greeting, signoff          string
	subject, lead, tail                map[bokat.EventType]string
	service, time, address, movingTo   string
	provider, price, fixedPrice, terms string
	reference, cancelled, localTime    string
	providerPhone, providerEmail       string
	// byProvider replaces the cancellation's lead when the provider
	// cancelled.
	byProvider string
}

var (
	customerSV = customerWords{
		locale: "sv-SE", greeting: "Hej", signoff: "Vänliga hälsningar\nBokat\n",
		subject: map[bokat.EventType]string{
			bokat.EventBookingConfirmed:   "Bokningsbekräftelse: ",
			bokat.EventBookingRescheduled: "Ny tid för din bokning: ",
			bokat.EventBookingCancelled:   "Avbokning: ",
		},
		lead: map[bokat.EventType]string{
			bokat.EventBookingConfirmed:   "din bokning är bekräftad.",
			bokat.EventBookingRescheduled: "din bokning har flyttats till en ny tid. Den tidigare tiden gäller inte längre.",
			bokat.EventBookingCancelled:   "din bokning är avbokad.",
		},
		tail: map[bokat.EventType]string{
			bokat.EventBookingConfirmed:   "En kalenderinbjudan finns bifogad. Vill du avboka eller byta tid gör du det via tjänsten där du bokade.",
			bokat.EventBookingRescheduled: "Den bifogade kalenderinbjudan uppdaterar besöket i din kalender.",
			bokat.EventBookingCancelled:   "Den bifogade kalenderfilen tar bort besöket ur din kalender.",
		},
		service: "Tjänst", time: "Tid", address: "Adress", movingTo: "Flytt till", provider: "Utförare",
		price: "Pris", fixedPrice: " (fast pris enligt villkoren)", terms: "Villkor", reference: "Bokningsnummer",
		cancelled: "Avbokad", localTime: " (svensk tid)", providerPhone: "Utförarens telefon", providerEmail: "Utförarens e-post",
		byProvider: "utföraren har tyvärr avbokat din bokning och kan inte komma på den bokade tiden. " +
			"Du kan boka en ny tid via tjänsten där du bokade.",
	}
	customerEN = customerWords{
		english: true, locale: "en-GB", greeting: "Hello", signoff: "Kind regards\nBokat\n",
		subject: map[bokat.EventType]string{
			bokat.EventBookingConfirmed:   "Booking confirmed: ",
			bokat.EventBookingRescheduled: "New time for your booking: ",
			bokat.EventBookingCancelled:   "Booking cancelled: ",
		},
		lead: map[bokat.EventType]string{
			bokat.EventBookingConfirmed:   "your booking is confirmed.",
			bokat.EventBookingRescheduled: "your booking has moved to a new time. The previous time no longer applies.",
			bokat.EventBookingCancelled:   "your booking is cancelled.",
		},
		tail: map[bokat.EventType]string{
			bokat.EventBookingConfirmed:   "A calendar invitation is attached. To cancel or change the time, use the service you booked through.",
			bokat.EventBookingRescheduled: "The attached calendar invitation updates the visit in your calendar.",
			bokat.EventBookingCancelled:   "The attached calendar file removes the visit from your calendar.",
		},
		service: "Service", time: "Time", address: "Address", movingTo: "Moving to", provider: "Provider",
		price: "Price", fixedPrice: " (fixed price under the terms)", terms: "Terms", reference: "Booking reference",
		cancelled: "Cancelled", localTime: " (Stockholm time)", providerPhone: "Provider's phone", providerEmail: "Provider's e-mail",
		byProvider: "unfortunately the provider has cancelled your booking and cannot come at the booked time. " +
			"You can book a new time through the service you booked with.",
	}
)

func (c composer) customer(b Booking, ev bokat.EventType, byProvider bool) Message {
	w, service := customerSV, b.ServiceLabelSV
	if isEnglish(b.Locale) {
		w = customerEN
		if b.ServiceLabelEN != "" {
			service = b.ServiceLabelEN
		}
	}
	slot := slotLabel(b, w.locale)
	greeting := w.greeting
	if b.CustomerName != "" {
		greeting += " " + b.CustomerName
	}
	var body lines
	body.para(greeting + ",")
	if byProvider {
		body.para(w.byProvider)
	} else {
		body.para(w.lead[ev])
	}
	body.row(w.service, service)
	body.row(w.time, slot)
	body.row(w.address, b.ServiceAddress)
	body.row(w.movingTo, b.DestinationAddress)
	body.row(w.provider, b.ProviderName)
	body.row(w.price, priceLabel(b.PriceSEK, w.english)+w.fixedPrice)
	body.row(w.terms, strings.TrimSpace(b.TermsVersion+" "+b.TermsURL))
	body.row(w.reference, b.ID)
	if ev == bokat.EventBookingCancelled && !b.CancelledAt.IsZero() {
		body.row(w.cancelled, instantLabel(b.CancelledAt)+w.localTime)
	}
	if ev != bokat.EventBookingCancelled {
		customerTaxEstimate(&body, b, w.english)
	}
	body.WriteString("\n")
	if ev != bokat.EventBookingCancelled {
		body.row(w.providerPhone, b.ProviderPhone)
		body.row(w.providerEmail, b.ProviderEmail)
		body.WriteString("\n")
	}
	body.para(w.tail[ev])
	body.WriteString(w.signoff)
	return Message{Subject: w.subject[ev] + service + ", " + slot, Text: body.String()}
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
func (c composer) provider(b Booking, ev bokat.EventType, byProvider bool) Message {
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
		if byProvider {
			lead = "ni har avbokat uppdraget. Besöket ska inte genomföras; kunden har fått besked."
		}
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
	body.row("Pris", priceLabel(b.PriceSEK, false)+priceKindSV(b.Pricing))
	jobSizeRows(&body, b)
	body.row("Villkor", strings.TrimSpace(b.TermsVersion+" "+b.TermsURL))
	body.row("Bokningsnummer", b.ID)
	if ev == bokat.EventBookingCancelled {
		body.row("Avbokad", instantLabel(b.CancelledAt))
		body.row("Orsak", cancelReasonsSV[b.CancelReason])
	} else {
		providerTaxEstimate(&body, b)
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

// priceKindSV names the kind of a price in a provider's message.
func priceKindSV(p Pricing) string {
	if p.PriceType == "starting_price" || p.PricingModel == "starting_price" {
		return " (från-pris enligt villkoren)"
	}
	return " (fast pris)"
}

// jobSizeRows writes what set the price of a per-unit job: the quantity
// priced at the unit price ("8 fönster à 72 kr = 576 kr") and, when it
// decided the price, the provider's minimum charge.
func jobSizeRows(body *lines, b Booking) {
	p := b.Pricing
	if p.UnitPriceSEK <= 0 || p.Quantity <= 0 {
		return
	}
	quantity := strings.Replace(strconv.FormatFloat(p.Quantity, 'f', -1, 64), ".", ",", 1)
	product := int(math.Floor(float64(p.UnitPriceSEK)*p.Quantity + 0.5))
	body.row("Omfattning", fmt.Sprintf("%s %s à %s = %s", quantity, p.Unit, priceLabel(p.UnitPriceSEK, false), priceLabel(product, false)))
	if p.MinimumChargeSEK > 0 && product < p.MinimumChargeSEK && b.PriceSEK == p.MinimumChargeSEK {
		body.row("Lägsta debitering", priceLabel(p.MinimumChargeSEK, false)+" (gäller: omfattningen ger ett lägre belopp)")
	}
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
	e.SetSummary(icalText(summary, false))
	if b.ServiceAddress != "" {
		e.SetLocation(icalText(b.ServiceAddress, false))
	}
	e.SetDescription(icalText(strings.TrimSpace(m.Text), true))
	e.SetOrganizer(c.organizer, ics.WithCN("Bokat"))
	attendee := []ics.PropertyParameter{ics.WithRSVP(false)}
	if cn := icalParamText(m.ToName); cn != "" {
		attendee = append(attendee, ics.WithCN(cn))
	}
	if m.To != "" && bokat.CheckText(m.To, false) == "" {
		e.AddAttendee(m.To, attendee...)
	}
	return &Calendar{Method: string(method), Data: []byte(cal.Serialize(ics.WithNewLineWindows))}, nil
}

// icalText prepares a TEXT value (RFC 5545 §3.3.11) for the iCalendar
// writer, which escapes backslash, semicolon, comma and LF but passes every
// other character through: control characters (a CR would end the line) are
// removed and line breaks made LF. Input text is checked at the edge; this
// keeps text stored before then, and supply data, from breaking the object.
func icalText(s string, multiline bool) string {
	return bokat.CleanText(s, multiline)
}

// icalParamText makes a display name a valid unquoted parameter value
// (paramtext, RFC 5545 §3.1): no control characters, and none of DQUOTE,
// ";", ":", "," — nor the backslash and apostrophe the iCalendar writer
// would escape with a backslash, which parameter values do not know. A
// name is only shown, so these become look-alikes or spaces.
func icalParamText(s string) string {
	s = bokat.CleanText(s, false)
	return strings.Join(strings.Fields(paramReplacer.Replace(s)), " ")
}

var paramReplacer = strings.NewReplacer(`"`, "\u201d", `'`, "\u2019", ";", " ", ":", " ", ",", " ", `\`, "/")
