package booking

import (
	"encoding/json"
	"time"

	"bokat"
	"bokat/internal/schedule"
	"bokat/internal/taxdeduction"
)

// Record is the contract's BookingLifecycleRecord: a booking without
// customer contact data, as status bodies and webhook events carry it. It
// is a wire type; it lives here because the events written in the booking
// transactions carry it too.
type Record struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ProviderID   string `json:"provider_id"`
	ProviderName string `json:"provider_name"`
	ServiceID    string `json:"service_id"`
	SlotStartAt  string `json:"slot_start_at"`
	SlotEndAt    string `json:"slot_end_at"`
	SlotLabel    string `json:"slot_label,omitempty"`
	PriceSEK     int64  `json:"price_sek"`
	Currency     string `json:"currency"`
	ConfirmedAt  string `json:"confirmed_at"`
	TermsVersion string `json:"terms_version"`
	// TaxReductionEstimate is the preliminary ROT/RUT estimate the booking
	// keeps from its confirmation or latest reschedule; left out for none.
	TaxReductionEstimate *TaxEstimateWire `json:"tax_reduction_estimate,omitempty"`
	// The delivery outcome of the latest message to each party; left out
	// while it is queued.
	CustomerConfirmationStatus string `json:"customer_confirmation_status,omitempty"`
	ProviderConfirmationStatus string `json:"provider_confirmation_status,omitempty"`
}

// WireTime formats an instant as the contract's date-time on the Stockholm
// wall clock, with its offset ("2026-11-24T09:00:00+01:00").
func WireTime(t time.Time) string { return t.In(schedule.Stockholm()).Format(time.RFC3339) }

// RecordOf returns the redacted record of b.
func RecordOf(b bokat.Booking) Record {
	return Record{
		ID: b.ID, Status: b.Status, ProviderID: b.ProviderID, ProviderName: b.ProviderName, ServiceID: b.ServiceID,
		SlotStartAt: WireTime(b.SlotStart), SlotEndAt: WireTime(b.SlotEnd), SlotLabel: b.SlotLabel,
		PriceSEK: b.PriceSEK, Currency: "SEK", ConfirmedAt: WireTime(b.ConfirmedAt), TermsVersion: b.TermsVersion,
		CustomerConfirmationStatus: b.CustomerConfirmationStatus, ProviderConfirmationStatus: b.ProviderConfirmationStatus,
		TaxReductionEstimate: TaxEstimateWireOf(taxRules(), b.TaxReduction, b.PriceSEK),
	}
}

// taxRules returns the embedded ROT/RUT rules, or nil when they cannot be
// loaded (catalog.Load, which loads them too, stops the program then).
func taxRules() *taxdeduction.Rules {
	r, err := taxdeduction.Load()
	if err != nil {
		return nil
	}
	return r
}

// EventData is the `data` object of a booking event, stored as the outbox
// event's payload: {"booking": <Record>, "request_id": "bkr_…"}, and for
// booking.provider_action_required also "reason". It never holds customer
// contact data.
type EventData struct {
	Booking   Record `json:"booking"`
	RequestID string `json:"request_id"`
	Reason    string `json:"reason,omitempty"`
}

// eventPayload returns the outbox payload of an event about b.
func eventPayload(b bokat.Booking, reason string) ([]byte, error) {
	return json.Marshal(EventData{Booking: RecordOf(b), RequestID: b.RequestID, Reason: reason})
}
