package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/taxdeduction"
)

// TestAppendOptionWritesWhatJSONMarshalWrites keeps the hand-written option
// encoder byte-for-byte equal to encoding/json.
func TestAppendOptionWritesWhatJSONMarshalWrites(t *testing.T) {
	t.Parallel()
	type mirror struct {
		optionWire
		Scope json.RawMessage `json:"scope"`
		Terms json.RawMessage `json:"terms"`
	}
	unit, quantity, minimum := int64(45), 62.5, int64(2500)
	tricky := "Rör & <Co> \"AB\" \\ ny\nrad\t\x01 ✓ \u2028 \xff slut"
	texts := serviceTexts{scope: json.RawMessage(`{"included_sv":["a"]}`), terms: json.RawMessage(`{"version":"v","url":"http://x/terms/y","sections":[],"source_urls":[]}`)}
	cases := map[string]optionWire{
		"flat, optional fields empty": {
			BookingOptionID: "bo1.k.abc.def", ExpiresAt: "2026-11-23T09:15:00+01:00",
			Provider: optionProviderWire{ID: "prv_1", Name: "Ett AB"},
			Service:  optionServiceWire{ServiceID: "s", VerticalID: "vvs", JobTypeID: "j", LabelSV: "Etikett"},
			Slot:     timeWindowWire{StartAt: "2026-11-24T08:00:00+01:00", EndAt: "2026-11-24T09:30:00+01:00", Label: "tisdag 24 november 2026 kl. 08:00–09:30"},
			Price:    optionPriceWire{AmountSEK: 1890, Currency: "SEK", PricingModel: "flat", PriceType: "avg_fixed"},
			texts:    texts,
		},
		"per unit with tricky text": {
			BookingOptionID: "bo1.k." + tricky, ExpiresAt: tricky,
			Provider: optionProviderWire{ID: tricky, Name: tricky, City: tricky, RatingLabel: tricky},
			Service:  optionServiceWire{ServiceID: tricky, VerticalID: "cleaning", JobTypeID: tricky, LabelSV: tricky, LabelEN: tricky},
			Slot:     timeWindowWire{StartAt: tricky, EndAt: tricky, Label: tricky},
			Price: optionPriceWire{AmountSEK: 2813, Currency: "SEK", PricingModel: "per_sqm", PriceType: "avg_unit",
				UnitPriceSEK: &unit, Unit: "kvm", Quantity: &quantity, MinimumChargeSEK: &minimum},
			texts: texts,
		},
	}
	rules, err := taxdeduction.Load()
	if err != nil {
		t.Fatal(err)
	}
	withEstimate := cases["flat, optional fields empty"]
	withEstimate.TaxReductionEstimate = booking.TaxEstimateWireOf(rules, &bokat.TaxReductionEstimate{Kind: "rot", RatePercent: 30,
		LabourPercent: 80, LabourSEK: 1512, ReductionSEK: 453, RulesVersion: "rot_2026-01-01"}, 1890)
	cases["flat with a ROT estimate"] = withEstimate
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(mirror{optionWire: o, Scope: o.texts.scope, Terms: o.texts.terms})
			if err != nil {
				t.Fatal(err)
			}
			if got := appendOption(nil, o); string(got) != string(want) {
				t.Errorf("appendOption =\n%s\njson.Marshal =\n%s", got, want)
			}
		})
	}

	// Servers of one catalog and base URL share the texts rendered once.
	cat, err := loadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	first, err := serviceTextsFor(cat, "http://a.test")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := serviceTextsFor(cat, "http://a.test")
	other, _ := serviceTextsFor(cat, "http://b.test")
	if reflect.ValueOf(first).UnsafePointer() != reflect.ValueOf(again).UnsafePointer() {
		t.Error("the texts of the same catalog and base URL were rendered again")
	}
	if !bytes.Contains(other["vvs_install_faucet_standard"].terms, []byte(`"http://b.test/terms/`)) ||
		!bytes.Contains(first["vvs_install_faucet_standard"].terms, []byte(`"http://a.test/terms/`)) {
		t.Errorf("texts of another base URL: %s", other["vvs_install_faucet_standard"].terms)
	}
}
