package webhook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/outbox"
)

// TestBodyCarriesTheTaxEstimate checks that an event's booking keeps the
// preliminary ROT/RUT estimate the booking record carries, member for
// member as the booking package writes it, and valid by the contract; that
// members the contract does not name, inside the estimate too, are dropped;
// and that a booking without an estimate has none.
func TestBodyCarriesTheTaxEstimate(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 5, 5, 6, 0, 0, 0, time.UTC)
	b := bokat.Booking{ID: "bk_01HZX", Status: bokat.BookingConfirmed, ProviderID: "prov_vvs_sthlm_1",
		ProviderName: "Rörmokare Stockholm AB", ServiceID: "vvs_install_faucet_standard", SlotStart: start,
		SlotEnd: start.Add(90 * time.Minute), PriceSEK: 1890, ConfirmedAt: start.Add(-24 * time.Hour),
		TermsVersion: "fixed_price_terms_v1:vvs_install_faucet_standard", RequestID: "rq_01HZX",
		TaxReduction: &bokat.TaxReductionEstimate{Kind: "rot", RatePercent: 30, LabourPercent: 80, LabourSEK: 1512,
			ReductionSEK: 453, RulesVersion: "rot_2026-01-01"}}
	record := booking.RecordOf(b)
	if record.TaxReductionEstimate == nil {
		t.Fatal("the booking record has no estimate")
	}
	want, err := json.Marshal(record.TaxReductionEstimate)
	if err != nil {
		t.Fatal(err)
	}

	keys := testKeyring(t)
	d := claimed(t, keys, "http://127.0.0.1/hook", NewSigningSecret())
	d.Payload, _ = json.Marshal(booking.EventData{Booking: record, RequestID: b.RequestID})
	got := bodyEstimate(t, d)
	if !bytes.Equal(got, want) {
		t.Errorf("the event's estimate =\n%s\nwant the booking record's\n%s", got, want)
	}

	// Members the contract does not name never leave, inside the estimate either.
	var payload map[string]any
	if err := json.Unmarshal(d.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	est := payload["booking"].(map[string]any)["tax_reduction_estimate"].(map[string]any)
	est["customer_email"] = "anna@example.se"
	est["conditions"].([]any)[0].(map[string]any)["personnummer"] = "19811218-9876"
	d.Payload, _ = json.Marshal(payload)
	if got := bodyEstimate(t, d); !bytes.Equal(got, want) {
		t.Errorf("with members the contract does not name, the event's estimate =\n%s\nwant\n%s", got, want)
	}

	b.TaxReduction = nil
	d.Payload, _ = json.Marshal(booking.EventData{Booking: booking.RecordOf(b), RequestID: b.RequestID})
	if got := bodyEstimate(t, d); got != nil {
		t.Errorf("a booking without an estimate: the event carries %s", got)
	}
}

// bodyEstimate returns the body's data.booking.tax_reduction_estimate, or
// nil when it has none, after checking the body against the contract and
// that nothing of the customer's is in it.
func bodyEstimate(t *testing.T, d outbox.ClaimedDelivery) json.RawMessage {
	t.Helper()
	body, err := Body(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, leaked := range []string{"anna@example.se", "19811218-9876", "personnummer\""} {
		if strings.Contains(string(body), leaked) {
			t.Errorf("body carries %q: %s", leaked, body)
		}
	}
	contract, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.ValidateWebhookEvent(body); err != nil {
		t.Errorf("the body does not match the contract: %v\n%s", err, body)
	}
	var ev struct {
		Data struct {
			Booking struct {
				TaxReductionEstimate json.RawMessage `json:"tax_reduction_estimate"`
			} `json:"booking"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	return ev.Data.Booking.TaxReductionEstimate
}
