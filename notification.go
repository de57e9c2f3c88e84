package bokat

import "time"

// NotificationJob is a message to a customer or provider, queued in the
// transaction of the change it reports and delivered later by the
// notification worker: about a booking (BookingID and the OutboxID of the
// event it reports) or about a provider follow-up request (RequestID). The
// writes that queue messages name it; they need nothing of the delivery.
type NotificationJob struct {
	ID            string
	OutboxID      string
	BookingID     string
	RequestID     string
	EventType     string // a booking's EventType, or NotificationRequestCreated
	Recipient     string // RecipientCustomer or RecipientProvider
	Status        string // Notification*
	NextAttemptAt time.Time
	CreatedAt     time.Time
	// APIRequestID and TraceID name the request that queued the job, for
	// the worker's logs; when empty they are taken from ctx
	// (RequestIDsFrom).
	APIRequestID string
	TraceID      string
	// Mode is the realm of the job: its booking's or request's (empty:
	// live). A test job is captured, never sent (docs/testing.md).
	Mode Mode
}

// NotificationRequestCreated is the event type of the notification job
// that hands a new provider follow-up request to its candidate providers.
const NotificationRequestCreated = "request.created"

// RequestNotice is everything the provider message about a follow-up
// request says. The follow-up requests fill it; the customer's contact
// data in it was given with the customer's consent to be handed to
// providers, which is the purpose of the request, and goes nowhere else.
type RequestNotice struct {
	ID        string
	CreatedAt time.Time

	VerticalLabelSV string
	JobTypeLabelSV  string
	Description     string

	// Location as the caller gave it (any of the three may be empty), and
	// the postcode read from it ("113 45").
	LocationInput string
	Address       string
	Postcode      string

	PreferredTimeText string
	Urgency           string
	BudgetSEK         *int64
	// CustomerNextStep is the contract's value (home_visit, price_info,
	// contact_me, direct_booking).
	CustomerNextStep string
	// Details are the caller's extra facts as "key: value" lines, in a
	// stable order.
	Details []string

	CustomerName  string
	CustomerPhone string
	CustomerEmail string

	Candidates []NoticeCandidate
}

// NoticeCandidate is a provider a follow-up request goes to, with its
// contact data and how sending to it has gone so far.
type NoticeCandidate struct {
	ProviderID string
	Name       string
	Email      string // empty: the provider cannot be written to
	Phone      string
	// Active is false for a provider withdrawn from the supply since the
	// request was made; it is not written to.
	Active bool
	// Status is NotificationPending until the provider's message is sent
	// (or skipped, or failed for good).
	Status string
}
