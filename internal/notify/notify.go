// Package notify tells customers and providers about their bookings by
// e-mail. A worker claims due jobs from the notification_jobs table (which
// the booking code fills in the same transaction as each booking change),
// loads what the message must say through a BookingSource, sends it through
// a Sender, retries temporary failures with backoff, and writes the outcome
// back to the booking's customer_confirmation_status /
// provider_confirmation_status. A provider message that fails for good
// raises booking.provider_action_required.
//
// The same worker hands provider follow-up requests to their candidate
// providers: a request.created job (written with the request) becomes one
// message per provider, read through a RequestSource, each provider's
// outcome recorded so that retries write only to those not yet reached.
// Requests have no booking: nothing is written back and nothing escalates.
//
// Customer messages are Swedish unless the booking's locale asks for
// English, and carry an iCalendar invitation (METHOD:REQUEST for a
// confirmation or a new time, METHOD:CANCEL for a cancellation; one UID per
// booking, a rising SEQUENCE, UTC times). Provider messages carry what the
// provider needs to do the job, customer contact details included: they are
// the only place that data leaves the store. Nothing here logs contact data
// or message contents.
package notify

import (
	"context"
	"time"

	"bokat"
)

// Booking is everything a message about a booking says. The booking store
// fills it; all instants are absolute (UTC or any zone), shown in Stockholm
// time.
type Booking struct {
	ID     string
	Status string // "confirmed" or "cancelled"

	ServiceLabelSV string
	ServiceLabelEN string

	ProviderName  string
	ProviderEmail string // empty: provider messages are skipped
	ProviderPhone string

	CustomerName  string
	CustomerEmail string // empty: customer messages are skipped
	CustomerPhone string

	// ServiceAddress is where the work is done, as one line (street,
	// postcode, city). DestinationAddress is set for moves.
	ServiceAddress     string
	DestinationAddress string

	SlotStart time.Time
	SlotEnd   time.Time
	PriceSEK  int
	// TaxReduction is the booking's preliminary ROT/RUT estimate, or nil;
	// messages state it as conditional, never as the price.
	TaxReduction *bokat.TaxReductionEstimate
	// Pricing is how PriceSEK was priced (zero for bookings made before
	// it was kept): the provider's message shows the job's size from it.
	Pricing Pricing

	TermsVersion string
	TermsURL     string

	// Locale is the customer's locale from the booking ("sv-SE" default;
	// one starting with "en" selects English).
	Locale string

	ConfirmedAt   time.Time
	RescheduledAt time.Time // zero unless rescheduled
	CancelledAt   time.Time // zero unless cancelled
	// CancelReason is the contract's reason code, when cancelled.
	CancelReason string

	// Sequence is the iCalendar SEQUENCE of the booking's current state: 0
	// when confirmed, one more for each reschedule and for the
	// cancellation. It must only grow.
	Sequence int
}

// Pricing is how a booking's price was reached, as its option priced it.
type Pricing struct {
	// PricingModel and PriceType are the catalog's ("per_window",
	// "avg_unit"; "flat", "avg_fixed"; "starting_price").
	PricingModel, PriceType string
	// For a per-unit price: the unit price, the quantity priced, its
	// Swedish unit ("fönster", "kvm", "st") and the provider's minimum
	// charge (0 without one).
	UnitPriceSEK     int
	Quantity         float64
	Unit             string
	MinimumChargeSEK int
}

// BookingSource is what the notification worker needs of the booking store.
type BookingSource interface {
	// NotificationBooking returns the booking's current state, or an error
	// wrapping bokat.ErrNotFound when there is no such booking.
	NotificationBooking(ctx context.Context, bookingID string) (Booking, error)
}

// ProviderFollowUp raises booking.provider_action_required for a booking
// whose provider could not be told about a change.
type ProviderFollowUp interface {
	// ProviderActionRequired queues the event (in its own transaction). An
	// error makes the worker try again later; a success is not repeated
	// (except after a crash between the two, so at least once).
	ProviderActionRequired(ctx context.Context, bookingID string) error
}

// Message is one e-mail.
type Message struct {
	// Kind names the message in logs, e.g. "booking.confirmed/customer".
	Kind    string
	To      string
	ToName  string
	Subject string
	Text    string
	// Calendar, when set, is sent as an iCalendar invitation.
	Calendar *Calendar
}

// Calendar is an iCalendar object and its METHOD (REQUEST or CANCEL).
type Calendar struct {
	Method string
	Data   []byte
}

// Sender sends a message. Errors are *SendError.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// SendError is a failed send. Its text never holds an address or any other
// contact data, so it may be stored and logged.
type SendError struct {
	// Temporary failures are worth retrying (4xx replies, connection
	// problems); permanent ones are not (5xx replies, bad addresses).
	Temporary bool
	Summary   string
}

func (e *SendError) Error() string { return e.Summary }
