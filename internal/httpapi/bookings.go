package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/idem"
)

// Wire types of confirmation, status, cancel and reschedule.

type confirmationLocationWire struct {
	CountryCode string `json:"country_code"`
	Address     string `json:"address"`
	Postcode    string `json:"postcode"`
}

func (l *confirmationLocationWire) location() *booking.Location {
	if l == nil {
		return nil
	}
	return &booking.Location{Address: l.Address, Postcode: l.Postcode}
}

type confirmRequestWire struct {
	SpecVersion            string                    `json:"spec_version,omitempty"`
	BookingOptionID        string                    `json:"booking_option_id"`
	Customer               customerWire              `json:"customer"`
	ServiceLocation        confirmationLocationWire  `json:"service_location"`
	DestinationLocation    *confirmationLocationWire `json:"destination_location,omitempty"`
	UserConsentConfirmed   bool                      `json:"user_consent_confirmed"`
	UserConsentStatement   string                    `json:"user_consent_statement,omitempty"`
	ConsentCollectedAt     *time.Time                `json:"consent_collected_at,omitempty"`
	ConsentSource          string                    `json:"consent_source,omitempty"`
	BookingTermsAccepted   bool                      `json:"booking_terms_accepted"`
	BookingTermsVersion    string                    `json:"booking_terms_version"`
	BookingTermsAcceptedAt time.Time                 `json:"booking_terms_accepted_at"`
	Source                 string                    `json:"source,omitempty"`
	ExternalReference      string                    `json:"external_reference,omitempty"`
	IdempotencyKey         string                    `json:"idempotency_key"`
}

// deliveryWire is one party's delivery state. "queued" means a message (or,
// for webhook, an outbox event) was written in the booking's transaction;
// it is never booking truth.
type deliveryWire struct {
	Status string `json:"status"`
}

type deliveriesWire struct {
	Customer deliveryWire `json:"customer"`
	Provider deliveryWire `json:"provider"`
	Webhook  deliveryWire `json:"webhook"`
}

var allQueued = deliveriesWire{Customer: deliveryWire{"queued"}, Provider: deliveryWire{"queued"}, Webhook: deliveryWire{"queued"}}

type confirmResponseWire struct {
	OK                   bool           `json:"ok"`
	SpecVersion          string         `json:"spec_version"`
	RequestID            string         `json:"request_id"`
	Booking              booking.Record `json:"booking"`
	ProviderSelected     bool           `json:"provider_selected"`
	AvailabilityChecked  bool           `json:"availability_checked"`
	BookingCreated       bool           `json:"booking_created"`
	ConfirmationDelivery deliveriesWire `json:"confirmation_delivery"`
	IdempotentReplay     bool           `json:"idempotent_replay"`
	SafeNextStep         string         `json:"safe_next_step"`
}

type statusFoundWire struct {
	OK                        bool           `json:"ok"`
	Found                     bool           `json:"found"`
	RequestID                 string         `json:"request_id"`
	Booking                   booking.Record `json:"booking"`
	ProviderSelected          bool           `json:"provider_selected"`
	AvailabilityChecked       bool           `json:"availability_checked"`
	BookingCreated            bool           `json:"booking_created"`
	CurrentConfirmationActive *bool          `json:"current_confirmation_active,omitempty"`
	SafeNextStep              string         `json:"safe_next_step"`
}

type statusNotFoundWire struct {
	OK           bool   `json:"ok"`
	Found        bool   `json:"found"`
	BookingID    string `json:"booking_id"`
	SafeNextStep string `json:"safe_next_step"`
}

type cancelRequestWire struct {
	SpecVersion               string `json:"spec_version,omitempty"`
	UserConfirmationConfirmed bool   `json:"user_confirmation_confirmed"`
	Reason                    string `json:"reason"`
	Notes                     string `json:"notes,omitempty"`
	IdempotencyKey            string `json:"idempotency_key"`
}

type cancelResponseWire struct {
	OK                        bool           `json:"ok"`
	SpecVersion               string         `json:"spec_version"`
	BookingID                 string         `json:"booking_id"`
	Status                    string         `json:"status"`
	CancelledAt               string         `json:"cancelled_at"`
	BookingCreated            bool           `json:"booking_created"`
	CurrentConfirmationActive bool           `json:"current_confirmation_active"`
	IdempotentReplay          bool           `json:"idempotent_replay"`
	NotificationDelivery      deliveriesWire `json:"notification_delivery"`
	SafeNextStep              string         `json:"safe_next_step"`
}

type rescheduleRequestWire struct {
	SpecVersion               string                    `json:"spec_version,omitempty"`
	BookingOptionID           string                    `json:"booking_option_id"`
	ServiceLocation           confirmationLocationWire  `json:"service_location"`
	DestinationLocation       *confirmationLocationWire `json:"destination_location,omitempty"`
	UserConfirmationConfirmed bool                      `json:"user_confirmation_confirmed"`
	BookingTermsAccepted      bool                      `json:"booking_terms_accepted"`
	BookingTermsVersion       string                    `json:"booking_terms_version"`
	BookingTermsAcceptedAt    time.Time                 `json:"booking_terms_accepted_at"`
	IdempotencyKey            string                    `json:"idempotency_key"`
}

type rescheduleResponseWire struct {
	OK                        bool           `json:"ok"`
	SpecVersion               string         `json:"spec_version"`
	Booking                   booking.Record `json:"booking"`
	BookingCreated            bool           `json:"booking_created"`
	CurrentConfirmationActive bool           `json:"current_confirmation_active"`
	ProviderSelected          bool           `json:"provider_selected"`
	AvailabilityChecked       bool           `json:"availability_checked"`
	RescheduledAt             string         `json:"rescheduled_at"`
	IdempotentReplay          bool           `json:"idempotent_replay"`
	NotificationDelivery      deliveriesWire `json:"notification_delivery"`
	SafeNextStep              string         `json:"safe_next_step"`
}

// confirmedSafeNextStep tells an assistant exactly what it may now claim.
func confirmedSafeNextStep(b bokat.Booking, what string) string {
	return fmt.Sprintf("The booking %s is %s: %s with %s, %s, for %d SEK (terms %s). You may tell the user exactly "+
		"this provider, this time and this price — nothing else (no other provider, time, price or promise beyond "+
		"the terms). Confirmation messages to the customer and the provider are queued, not yet delivered: do not "+
		"say they were received. Keep booking.id to read its status (GET /v1/bookings/%s), cancel or reschedule it.",
		b.ID, what, b.ServiceLabelSV, b.ProviderName, b.SlotLabel, b.PriceSEK, b.TermsVersion, b.ID) + taxEstimateStep(b)
}

// taxEstimateStep tells an assistant how to speak of a booking's ROT/RUT
// estimate: after the booked price, as conditional, never as granted.
func taxEstimateStep(b bokat.Booking) string {
	e := b.TaxReduction
	if e == nil {
		return ""
	}
	kind := strings.ToUpper(e.Kind)
	return fmt.Sprintf(" booking.tax_reduction_estimate is a preliminary %s estimate, not a granted reduction and not the "+
		"booked price: you may say that if the customer qualifies and has enough of this year's allowance left, the %s "+
		"deduction would be about %d SEK, so they would pay about %d SEK of the booked %d SEK; name its conditions. The "+
		"provider asks for the customer's personal identity number at invoicing; do not ask for it.",
		kind, kind, e.ReductionSEK, max(b.PriceSEK-e.ReductionSEK, 0), b.PriceSEK)
}

// handleConfirm serves POST /v1/bookings and its deprecated twin.
func (s *Server) handleConfirm(w http.ResponseWriter, r *http.Request) error {
	return serveKeyed(s, w, r, keyedWrite{operation: booking.OpConfirm, precheck: bookingConsent(booking.OpConfirm),
		status: http.StatusCreated, replayInBody: true, counted: s.metrics.BookingConfirmed},
		func(p bokat.Principal, in *confirmRequestWire, key idem.Key, fp string) (idem.Outcome, bool, error) {
			return s.bookings.Confirm(r.Context(), p, in.input(), key, fp, confirmOutcome)
		})
}

// input maps a confirmation to the use case's input.
func (in *confirmRequestWire) input() booking.ConfirmInput {
	input := booking.ConfirmInput{
		OptionID: in.BookingOptionID,
		Customer: bokat.BookingContact{Name: in.Customer.Name, FirstName: in.Customer.FirstName, LastName: in.Customer.LastName,
			Phone: in.Customer.Phone, Email: in.Customer.Email},
		ServiceLocation:     *in.ServiceLocation.location(),
		DestinationLocation: in.DestinationLocation.location(),
		ConsentConfirmed:    in.UserConsentConfirmed,
		Consent:             bokat.BookingConsent{Statement: in.UserConsentStatement, Source: in.ConsentSource},
		TermsAccepted:       in.BookingTermsAccepted,
		TermsVersion:        in.BookingTermsVersion,
		TermsAcceptedAt:     in.BookingTermsAcceptedAt,
		Source:              in.Source,
		ExternalReference:   in.ExternalReference,
	}
	if in.ConsentCollectedAt != nil {
		input.Consent.CollectedAt = *in.ConsentCollectedAt
	}
	return input
}

// confirmOutcome renders the answer of a new booking (HTTP 201), stored
// with its idempotency key.
func confirmOutcome(b bokat.Booking) (idem.Outcome, error) {
	raw, err := json.Marshal(confirmResponseWire{
		OK: true, SpecVersion: bokat.BookingsContractVersion, RequestID: b.RequestID, Booking: booking.RecordOf(b),
		ProviderSelected: true, AvailabilityChecked: true, BookingCreated: true,
		ConfirmationDelivery: allQueued,
		SafeNextStep:         confirmedSafeNextStep(b, "confirmed"),
	})
	return idem.Outcome{Body: raw}, err
}

// handleBookingStatus serves GET /v1/bookings/{booking_id} and its
// deprecated twin (which leaves out current_confirmation_active).
func (s *Server) handleBookingStatus(legacy bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("booking_id")
		b, err := s.bookings.Status(r.Context(), auth.PrincipalFrom(r.Context()), id)
		if errors.Is(err, bokat.ErrNotFound) {
			s.writeJSON(w, r, http.StatusOK, statusNotFoundWire{OK: true, Found: false, BookingID: id,
				SafeNextStep: "No booking with this id is visible to your credential. Do not tell the user that a booking " +
					"exists or is confirmed. Check the id (booking.id or request_id of the confirmation) and the credential; " +
					"if the user wants a booking, search booking options and confirm their choice."})
			return nil
		}
		if err != nil {
			return err
		}
		resp := statusFoundWire{OK: true, Found: true, RequestID: b.RequestID, Booking: booking.RecordOf(b),
			ProviderSelected: true, AvailabilityChecked: true, BookingCreated: true}
		if !legacy {
			active := b.Active()
			resp.CurrentConfirmationActive = &active
		}
		if b.Active() {
			resp.SafeNextStep = confirmedSafeNextStep(b, "confirmed") + " Delivery states (customer_confirmation_status, " +
				"provider_confirmation_status) are not booking truth; when absent, messages are still queued."
		} else {
			resp.SafeNextStep = fmt.Sprintf("The booking %s was cancelled on %s; it is no longer active. Do not present it as "+
				"booked. To book again, search booking options and confirm the user's new choice.", b.ID, booking.WireTime(b.CancelledAt))
		}
		s.writeJSON(w, r, http.StatusOK, resp)
		return nil
	}
}

// handleCancel serves POST /v1/bookings/{booking_id}/cancel.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("booking_id")
	return serveKeyed(s, w, r, keyedWrite{operation: booking.OpCancel, bookingID: id, precheck: bookingConsent(booking.OpCancel),
		status: http.StatusOK, replayInBody: true, counted: s.metrics.BookingCancelled},
		func(p bokat.Principal, in *cancelRequestWire, key idem.Key, fp string) (idem.Outcome, bool, error) {
			return s.bookings.Cancel(r.Context(), p, id,
				booking.CancelInput{UserConfirmed: in.UserConfirmationConfirmed, Reason: in.Reason, Notes: in.Notes},
				key, fp, cancelOutcome)
		})
}

// cancelOutcome renders the answer of a cancellation, stored with its
// idempotency key.
func cancelOutcome(b bokat.Booking) (idem.Outcome, error) {
	raw, err := json.Marshal(cancelResponseWire{
		OK: true, SpecVersion: bokat.BookingsContractVersion, BookingID: b.ID, Status: bokat.BookingCancelled,
		CancelledAt: booking.WireTime(b.CancelledAt), BookingCreated: true, CurrentConfirmationActive: false,
		NotificationDelivery: allQueued,
		SafeNextStep: fmt.Sprintf("The booking %s (%s with %s, %s) is cancelled and its time is released. Tell the "+
			"user exactly that. Cancellation messages to the customer and the provider are queued, not yet "+
			"delivered. To book again, search booking options and confirm the user's new choice.",
			b.ID, b.ServiceLabelSV, b.ProviderName, b.SlotLabel),
	})
	return idem.Outcome{Body: raw}, err
}

// handleReschedule serves POST /v1/bookings/{booking_id}/reschedule.
func (s *Server) handleReschedule(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("booking_id")
	return serveKeyed(s, w, r, keyedWrite{operation: booking.OpReschedule, bookingID: id, precheck: bookingConsent(booking.OpReschedule),
		status: http.StatusOK, replayInBody: true, counted: s.metrics.BookingRescheduled},
		func(p bokat.Principal, in *rescheduleRequestWire, key idem.Key, fp string) (idem.Outcome, bool, error) {
			return s.bookings.Reschedule(r.Context(), p, id, booking.RescheduleInput{
				OptionID:            in.BookingOptionID,
				ServiceLocation:     *in.ServiceLocation.location(),
				DestinationLocation: in.DestinationLocation.location(),
				UserConfirmed:       in.UserConfirmationConfirmed,
				TermsAccepted:       in.BookingTermsAccepted,
				TermsVersion:        in.BookingTermsVersion,
				TermsAcceptedAt:     in.BookingTermsAcceptedAt,
			}, key, fp, rescheduleOutcome)
		})
}

// rescheduleOutcome renders the answer of a reschedule, stored with its
// idempotency key.
func rescheduleOutcome(b bokat.Booking) (idem.Outcome, error) {
	raw, err := json.Marshal(rescheduleResponseWire{
		OK: true, SpecVersion: bokat.BookingsContractVersion, Booking: booking.RecordOf(b),
		BookingCreated: true, CurrentConfirmationActive: true, ProviderSelected: true, AvailabilityChecked: true,
		RescheduledAt: booking.WireTime(b.RescheduledAt), NotificationDelivery: allQueued,
		SafeNextStep: confirmedSafeNextStep(b, "moved to a new time") + " The old time is released.",
	})
	return idem.Outcome{Body: raw}, err
}

// handleCalendarFeed serves GET /calendar/{provider_id}/{token}.ics: the
// provider's bookings as iCalendar. A wrong token and an unknown provider
// both answer 404.
func (s *Server) handleCalendarFeed(w http.ResponseWriter, r *http.Request) error {
	notFound := bokat.Errorf(bokat.CodeNotFound, "no calendar feed at this address")
	providerID := r.PathValue("provider_id")
	token, ok := strings.CutSuffix(r.PathValue("feed"), ".ics")
	if !ok || !s.feed.Verify(providerID, token) {
		return notFound
	}
	fw := &feedWriter{w: w}
	err := s.feed.Render(r.Context(), providerID, fw)
	if fw.started {
		// The feed is under way (the store was read before its first
		// byte): an error now is the connection's, and no Problem answer
		// can follow the calendar's first bytes.
		return nil
	}
	if errors.Is(err, bokat.ErrNotFound) {
		return notFound
	}
	return err
}

// feedWriter sets a calendar feed's headers at its first write, so that an
// error before it (an unknown provider, the store) is answered as a
// Problem without them.
type feedWriter struct {
	w       http.ResponseWriter
	started bool
}

func (f *feedWriter) Write(p []byte) (int, error) {
	if !f.started {
		f.started = true
		f.w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
		f.w.Header().Set("Cache-Control", "private, max-age=300")
		f.w.Header().Set("Referrer-Policy", "no-referrer")
	}
	return f.w.Write(p)
}
