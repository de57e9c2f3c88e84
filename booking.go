package bokat

import "time"

// Booking statuses of the contract.
const (
	BookingConfirmed = "confirmed"
	BookingCancelled = "cancelled"
)

// Booking is a confirmed (or later cancelled) booking without customer
// contact data: everything in it may appear in a status body, an event or a
// log line. The contact data is a separate BookingContact.
type Booking struct {
	ID string
	// RequestID is the id of the confirmation; status accepts it as well.
	RequestID string
	// OwnerClientID and OwnerUserID name the principal that confirmed it;
	// only that principal may read, cancel or reschedule it.
	OwnerClientID string
	OwnerUserID   string
	Status        string // BookingConfirmed or BookingCancelled
	// Mode is the realm of the booking: its owner's (empty: live).
	Mode Mode

	ProviderID   string
	ProviderName string
	ServiceID    string
	VerticalID   string
	JobTypeID    string
	// ServiceLabelSV and ServiceLabelEN are the catalog's labels at booking time.
	ServiceLabelSV string
	ServiceLabelEN string

	// SlotStart and SlotEnd bound the job [SlotStart, SlotEnd); SlotLabel
	// names it in the booking's locale.
	SlotStart, SlotEnd time.Time
	SlotLabel          string

	// PriceSEK is the booked price in whole SEK, the option's amount.
	PriceSEK         int64
	PricingModel     string
	PriceType        string
	UnitPriceSEK     int64
	Quantity         float64
	Unit             string
	MinimumChargeSEK int64
	// TaxReduction is the preliminary ROT/RUT estimate the booking was
	// confirmed or last rescheduled with; nil when there is none.
	TaxReduction *TaxReductionEstimate

	TermsVersion    string
	TermsAcceptedAt time.Time
	// Postcode and DestinationPostcode are five digits ("11345"); the
	// destination is empty unless the job has one (moves).
	Postcode            string
	DestinationPostcode string
	// Locale is the language of labels and messages ("sv-SE" by default).
	Locale            string
	Source            string
	ExternalReference string

	ConfirmedAt   time.Time
	RescheduledAt time.Time // zero unless rescheduled
	CancelledAt   time.Time // zero unless cancelled
	CancelReason  string
	// Sequence is the iCalendar SEQUENCE of the booking's current state: 0
	// when confirmed, one more for each reschedule and for the cancellation.
	Sequence int

	// CustomerConfirmationStatus and ProviderConfirmationStatus are the
	// delivery outcome (NotificationSent, Skipped or Failed) of the latest
	// message queued to each party; empty while it is queued.
	CustomerConfirmationStatus string
	ProviderConfirmationStatus string
}

// Active reports whether the booking is confirmed (not cancelled).
func (b Booking) Active() bool { return b.Status == BookingConfirmed }

// CalendarBooking is what a provider's calendar feed shows of a booking (a
// Booking's fields of the same names). A feed reads every booking of its
// provider's lookback and horizon before it writes a byte, so this holds
// nothing else: a fifth of a Booking's memory.
type CalendarBooking struct {
	ID                  string
	Status              string // BookingConfirmed or BookingCancelled
	ServiceLabelSV      string
	SlotStart, SlotEnd  time.Time
	PriceSEK            int64
	TermsVersion        string
	Postcode            string
	DestinationPostcode string
	ConfirmedAt         time.Time
	RescheduledAt       time.Time // zero unless rescheduled
	CancelledAt         time.Time // zero unless cancelled
	Sequence            int
}

// Active reports whether the booking is confirmed (not cancelled).
func (b CalendarBooking) Active() bool { return b.Status == BookingConfirmed }

// BookingContact is the customer contact data of a booking. It never
// appears in logs, errors, status bodies, events or the calendar feed; it
// leaves the store only in notifications to the customer and the provider.
type BookingContact struct {
	Name, FirstName, LastName string
	Phone, Email              string
	// ServiceAddress is where the job is done (as given; its postcode is
	// Booking.Postcode); DestinationAddress is where a move goes.
	ServiceAddress     string
	DestinationAddress string
}

// FullName returns the customer's name: Name, or first and last name.
func (c BookingContact) FullName() string {
	if c.Name != "" {
		return c.Name
	}
	if c.FirstName != "" && c.LastName != "" {
		return c.FirstName + " " + c.LastName
	}
	return c.FirstName + c.LastName
}

// BookingConsent records the customer's consent and terms acceptance given
// with a confirmation.
type BookingConsent struct {
	Statement   string
	Source      string
	CollectedAt time.Time // zero when not given
	// Method is how the consent was obtained; empty means caller-declared.
	Method ConsentMethod
}

// ConsentMethod is how the user's consent to a booking write was obtained.
type ConsentMethod string

const (
	// ConsentCallerDeclared: the caller sent the consent fields.
	ConsentCallerDeclared ConsentMethod = "caller_declared"
	// ConsentElicitation: Bokat asked the user itself, through an MCP
	// client's form, and the user accepted.
	ConsentElicitation ConsentMethod = "elicitation"
)

// MethodOrDefault is c's method, ConsentCallerDeclared when unset.
func (c BookingConsent) MethodOrDefault() string {
	if c.Method == "" {
		return string(ConsentCallerDeclared)
	}
	return string(c.Method)
}
