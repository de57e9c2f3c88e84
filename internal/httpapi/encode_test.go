package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

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
	withRUT := cases["per unit with tricky text"]
	withRUT.TaxReductionEstimate = booking.TaxEstimateWireOf(rules, &bokat.TaxReductionEstimate{Kind: "rut", RatePercent: 50,
		LabourPercent: 100, LabourSEK: 2813, ReductionSEK: 1406, RulesVersion: "no such version"}, 2813)
	cases["per unit with a RUT estimate of an unknown rules version"] = withRUT
	// Every field and condition text tricky, caps applied, negative
	// figures, and conditions nil (which json.Marshal writes as null).
	tricky2 := cases["per unit with tricky text"]
	tricky2.TaxReductionEstimate = &booking.TaxEstimateWire{Preliminary: false, LabelSV: tricky, LabelEN: tricky, Kind: tricky,
		RatePercent: -1, LabourPercent: 101, LabourAmountSEK: -5, EstimatedReductionSEK: 1 << 62, PriceAfterReductionSEK: 0,
		Currency: tricky, RulesVersion: tricky, YearlyCapSEK: 75000, KindYearlyCapSEK: 50000, CapsApplied: true}
	cases["tricky estimate without conditions"] = tricky2
	tricky3 := tricky2
	est := *tricky2.TaxReductionEstimate
	est.Conditions = []booking.TaxConditionWire{{ID: tricky, SV: tricky, EN: tricky}, {ID: "b", SV: "", EN: "<&>"}}
	tricky3.TaxReductionEstimate = &est
	cases["tricky estimate with conditions"] = tricky3
	tricky4 := tricky2
	empty := *tricky2.TaxReductionEstimate
	empty.Conditions = []booking.TaxConditionWire{}
	tricky4.TaxReductionEstimate = &empty
	cases["estimate with no conditions"] = tricky4
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

// TestAppendMetaWritesWhatJSONMarshalWrites keeps the hand-written
// metadata encoder byte-for-byte equal to encoding/json.
func TestAppendMetaWritesWhatJSONMarshalWrites(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 9, 15, 0, 123456700, time.FixedZone("CET", 3600))
	s := &Server{now: func() time.Time { return at }}
	for name, info := range map[string]requestInfo{
		"typical": {id: "0b6f3f0e-5c2a-4f63-9b1e-2f7d0b7f4a11", traceID: "4bf92f3577b34da6a3ce929d0e0e4736", contract: bokat.BookingsContractVersion},
		"tricky":  {id: "a\"b\\c<d>&e\n\x01✓\u2028\xff", traceID: "", contract: "x"},
	} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, &info))
			want, err := json.Marshal(metaWire{info.id, info.traceID, info.contract, at.UTC().Format(time.RFC3339Nano)})
			if err != nil {
				t.Fatal(err)
			}
			got := s.appendMeta([]byte("prefix"), r)
			if string(got) != "prefix"+string(want[:len(want)-1]) {
				t.Errorf("appendMeta =\n%s\njson.Marshal =\n%s", got, want)
			}
		})
	}
}

// TestAppendJSONStringWritesWhatJSONMarshalWrites covers the string
// encoder's fast path for valid UTF-8 and its slow path for invalid UTF-8,
// on chosen strings and on random ones built from the bytes that matter.
func TestAppendJSONStringWritesWhatJSONMarshalWrites(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "å", "ä", "ö", "€", "✓", "😀", "\u2028", "\u2029", "\u2027", "\u202a", "\xe2\x80", "\xe2",
		"\xff", "\x80", "\xc3", "<", ">", "&", "\"", "\\", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "\u0085", " "}
	check := func(s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, json.Marshal = %s", s, got, want)
		}
	}
	for _, p := range pieces {
		check(p)
		check("x" + p)
		check(p + "x")
	}
	check("Byta köksblandare, ny blandare finns på plats.")
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rnd.IntN(8) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		check(b.String())
	}
}

// TestAppendSearchHeadWritesWhatJSONMarshalWrites keeps the hand-written
// encoder of a search answer's members (all but the options) byte-for-byte
// equal to encoding/json, with every optional member present and absent.
func TestAppendSearchHeadWritesWhatJSONMarshalWrites(t *testing.T) {
	t.Parallel()
	tricky := "Rör & <Co> \"AB\" \\ ny\nrad\t\x01 ✓ \u2028 \xff slut"
	window := timeWindowWire{StartAt: "2026-11-24T08:00:00+01:00", EndAt: "2026-11-24T09:30:00+01:00", Label: "tisdag 24 november"}
	cases := map[string]searchResponseWire{
		"options": {OK: true, SpecVersion: "public_bookings_api_v1", AvailabilityChecked: true, DirectBookingAvailable: true,
			OptionCount: 6, RequestedTimeWindow: &readWindowWire{timeWindowWire: window}, SafeNextStep: "Show the options."},
		"words not understood": {OK: true, SpecVersion: tricky, OptionCount: 1,
			RequestedTimeWindow: &readWindowWire{timeWindowWire: timeWindowWire{StartAt: tricky, EndAt: tricky, Label: tricky},
				NotUnderstood: []string{"helst", tricky}}, SafeNextStep: tricky},
		"empty not understood": {RequestedTimeWindow: &readWindowWire{timeWindowWire: window, NotUnderstood: []string{}}},
		"empty window, next available": {OK: true, ProviderSelected: true, BookingCreated: true,
			RequestedTimeWindow: &readWindowWire{timeWindowWire: window},
			NextAvailable:       []timeWindowWire{window, {StartAt: tricky, EndAt: "", Label: tricky}},
			Fallback:            &fallbackWire{Type: "provider_follow_up_request", Endpoint: "http://x/v1/requests?a=1&b=<2>", Reason: tricky},
			SafeNextStep:        "Ask."},
		"beyond the horizon": {LastBookableDate: "2026-12-07", NextAvailable: []timeWindowWire{},
			Fallback: &fallbackWire{}, OptionCount: -1},
		"nothing optional": {},
	}
	for name, out := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(appendSearchHead([]byte{}, out)) + "}"; got != string(want) {
				t.Errorf("appendSearchHead =\n%s\njson.Marshal =\n%s", got, want)
			}
		})
	}
}

// TestTaxConditionsEncodedOnceWriteWhatJSONMarshalWrites keeps the
// estimates of search answers, whose conditions are encoded once per rules,
// byte-for-byte equal to json.Marshal of the whole estimate.
func TestTaxConditionsEncodedOnceWriteWhatJSONMarshalWrites(t *testing.T) {
	t.Parallel()
	rules, err := taxdeduction.Load()
	if err != nil {
		t.Fatal(err)
	}
	encoded := taxConditionsFor(rules)
	if again := taxConditionsFor(rules); reflect.ValueOf(again).UnsafePointer() != reflect.ValueOf(encoded).UnsafePointer() {
		t.Error("the conditions of the same rules were encoded again")
	}
	for name, e := range map[string]bokat.TaxReductionEstimate{
		"ROT":                       {Kind: "rot", RatePercent: 30, LabourPercent: 80, LabourSEK: 1512, ReductionSEK: 453, RulesVersion: "rot_2026-01-01"},
		"RUT, unknown rules":        {Kind: "rut", RatePercent: 50, LabourPercent: 100, LabourSEK: 2813, ReductionSEK: 1406, RulesVersion: "no such version"},
		"reduction above the price": {Kind: "rot", RatePercent: 30, LabourPercent: 100, LabourSEK: 900, ReductionSEK: 5000, RulesVersion: "rot_2026-01-01"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(booking.TaxEstimateWireOf(rules, &e, 1890))
			if err != nil {
				t.Fatal(err)
			}
			figures, ok := booking.TaxEstimateFiguresOf(rules, &e, 1890)
			if !ok || figures.Conditions != nil || encoded[e.Kind] == nil {
				t.Fatalf("figures %+v, %v; encoded conditions %s", figures, ok, encoded[e.Kind])
			}
			if got := appendTaxEstimate(nil, &figures, encoded[e.Kind]); string(got) != string(want) {
				t.Errorf("appendTaxEstimate =\n%s\njson.Marshal =\n%s", got, want)
			}
		})
	}
}
