package taxdeduction_test

import (
	"strconv"
	"strings"
	"testing"

	"bokat"
	"bokat/internal/schedule"
	"bokat/internal/taxdeduction"
)

func load(tb testing.TB) *taxdeduction.Rules {
	tb.Helper()
	r, err := taxdeduction.Load()
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	return r
}

// TestEstimate checks the rule engine against worked examples.
func TestEstimate(t *testing.T) {
	t.Parallel()
	r := load(t)
	day2026 := schedule.NewDate(2026, 3, 10)
	tests := []struct {
		name string
		job  taxdeduction.Job
		want bokat.TaxReductionEstimate
		ok   bool
	}{
		{"ROT 2026: labour 50,000 incl. VAT gives 15,000",
			taxdeduction.Job{Kind: taxdeduction.ROT, AmountSEK: 50000, Labour: bokat.StatedLabour(100), PaidOn: day2026},
			bokat.TaxReductionEstimate{Kind: "rot", RatePercent: 30, LabourPercent: 100, LabourSEK: 50000, ReductionSEK: 15000, RulesVersion: "rot_2026-01-01"}, true},
		{"ROT 2026: only the labour part counts",
			taxdeduction.Job{Kind: taxdeduction.ROT, AmountSEK: 80000, Labour: bokat.StatedLabour(62), PaidOn: day2026},
			bokat.TaxReductionEstimate{Kind: "rot", RatePercent: 30, LabourPercent: 62, LabourSEK: 49600, ReductionSEK: 14880, RulesVersion: "rot_2026-01-01"}, true},
		{"RUT: 50 % of labour",
			taxdeduction.Job{Kind: taxdeduction.RUT, AmountSEK: 3000, Labour: bokat.StatedLabour(100), PaidOn: day2026},
			bokat.TaxReductionEstimate{Kind: "rut", RatePercent: 50, LabourPercent: 100, LabourSEK: 3000, ReductionSEK: 1500, RulesVersion: "rut_2025-01-01"}, true},
		{"RUT: labour rounded half up, reduction rounded down",
			taxdeduction.Job{Kind: taxdeduction.RUT, AmountSEK: 1495, Labour: bokat.StatedLabour(85), PaidOn: day2026},
			// 1495 × 0.85 = 1270.75 → 1271; 50 % = 635.5 → 635.
			bokat.TaxReductionEstimate{Kind: "rut", RatePercent: 50, LabourPercent: 85, LabourSEK: 1271, ReductionSEK: 635, RulesVersion: "rut_2025-01-01"}, true},
		{"caps are stated, not applied",
			taxdeduction.Job{Kind: taxdeduction.ROT, AmountSEK: 400000, Labour: bokat.StatedLabour(100), PaidOn: day2026},
			bokat.TaxReductionEstimate{Kind: "rot", RatePercent: 30, LabourPercent: 100, LabourSEK: 400000, ReductionSEK: 120000, RulesVersion: "rot_2026-01-01"}, true},
		{"labour share 0 gives a zero estimate",
			taxdeduction.Job{Kind: taxdeduction.RUT, AmountSEK: 1000, Labour: bokat.StatedLabour(0), PaidOn: day2026},
			bokat.TaxReductionEstimate{Kind: "rut", RatePercent: 50, LabourPercent: 0, LabourSEK: 0, ReductionSEK: 0, RulesVersion: "rut_2025-01-01"}, true},
		{"no labour part stated: no estimate",
			taxdeduction.Job{Kind: taxdeduction.ROT, AmountSEK: 50000, PaidOn: day2026}, bokat.TaxReductionEstimate{}, false},
		{"non-qualifying job type: none",
			taxdeduction.Job{Kind: taxdeduction.None, AmountSEK: 50000, Labour: bokat.StatedLabour(100), PaidOn: day2026}, bokat.TaxReductionEstimate{}, false},
		{"no rule before the data's first day",
			taxdeduction.Job{Kind: taxdeduction.ROT, AmountSEK: 50000, Labour: bokat.StatedLabour(100), PaidOn: schedule.NewDate(2025, 5, 11)}, bokat.TaxReductionEstimate{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := r.Estimate(tt.job)
			if ok != tt.ok || got != tt.want {
				t.Errorf("Estimate = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestEffectiveDates checks that ROT follows the payment day: 50 % from
// 2025-05-12 through 2025-12-31, 30 % from 2026-01-01; RUT stays 50 %.
func TestEffectiveDates(t *testing.T) {
	t.Parallel()
	r := load(t)
	tests := []struct {
		kind    taxdeduction.Kind
		day     schedule.Date
		rate    int
		version string
	}{
		{taxdeduction.ROT, schedule.NewDate(2025, 5, 12), 50, "rot_2025-05-12"},
		{taxdeduction.ROT, schedule.NewDate(2025, 6, 15), 50, "rot_2025-05-12"},
		{taxdeduction.ROT, schedule.NewDate(2025, 12, 31), 50, "rot_2025-05-12"},
		{taxdeduction.ROT, schedule.NewDate(2026, 1, 1), 30, "rot_2026-01-01"},
		{taxdeduction.ROT, schedule.NewDate(2026, 11, 26), 30, "rot_2026-01-01"},
		{taxdeduction.RUT, schedule.NewDate(2025, 6, 15), 50, "rut_2025-01-01"},
		{taxdeduction.RUT, schedule.NewDate(2027, 2, 1), 50, "rut_2025-01-01"},
	}
	for _, tt := range tests {
		got, ok := r.Estimate(taxdeduction.Job{Kind: tt.kind, AmountSEK: 10000, Labour: bokat.StatedLabour(100), PaidOn: tt.day})
		if !ok || got.RatePercent != tt.rate || got.RulesVersion != tt.version || got.ReductionSEK != int64(100*tt.rate) {
			t.Errorf("%s on %v: got %+v, %v; want rate %d, version %s", tt.kind, tt.day, got, ok, tt.rate, tt.version)
		}
	}
}

// TestRulesData checks the data file's content: the caps of the 2026 rules,
// conditions that state them, ROT's ownership rule, personnummer at
// invoicing, and a source for every rule.
func TestRulesData(t *testing.T) {
	t.Parallel()
	r := load(t)
	for _, rule := range r.All() {
		if rule.YearlyCapSEK != 75000 {
			t.Errorf("%s: yearly cap %d, want 75000", rule.Version, rule.YearlyCapSEK)
		}
		wantKindCap := map[taxdeduction.Kind]int64{taxdeduction.ROT: 50000, taxdeduction.RUT: 75000}[rule.Kind]
		if rule.KindYearlyCapSEK != wantKindCap {
			t.Errorf("%s: kind cap %d, want %d", rule.Version, rule.KindYearlyCapSEK, wantKindCap)
		}
		if len(rule.Sources) == 0 || rule.Sources[0] == "" {
			t.Errorf("%s: no source", rule.Version)
		}
		if got, ok := r.Version(rule.Version); !ok || got.Version != rule.Version {
			t.Errorf("Version(%s) = %v, %v", rule.Version, got.Version, ok)
		}
	}
	for _, k := range []taxdeduction.Kind{taxdeduction.ROT, taxdeduction.RUT} {
		info, ok := r.Kind(k)
		if !ok {
			t.Fatalf("kind %s missing", k)
		}
		ids := map[string]taxdeduction.Condition{}
		for _, c := range info.Conditions {
			ids[c.ID] = c
		}
		if c := ids["yearly_allowance"]; !strings.Contains(c.SV, "75 000") || !strings.Contains(c.EN, "75,000") ||
			!strings.Contains(c.EN, "Bokat does not know") {
			t.Errorf("%s: yearly_allowance condition does not state the cap and that Bokat cannot know: %+v", k, c)
		}
		if c := ids["invoicing_details"]; !strings.Contains(c.SV, "personnummer") || !strings.Contains(c.EN, "Bokat does not collect") {
			t.Errorf("%s: invoicing condition does not name personnummer: %+v", k, c)
		}
		_, ownership := ids["rot_ownership"]
		if ownership != (k == taxdeduction.ROT) {
			t.Errorf("%s: rot_ownership condition present = %v", k, ownership)
		}
	}
	if rot, _ := r.Kind(taxdeduction.ROT); !strings.Contains(rot.Conditions[0].SV, "50 000") {
		t.Errorf("ROT's allowance condition does not state the ROT cap: %q", rot.Conditions[0].SV)
	}
}

// TestParseRefuses checks that broken rules stop the program at start-up.
func TestParseRefuses(t *testing.T) {
	t.Parallel()
	base := `{"estimate_label_sv":"x","estimate_label_en":"x","sources":{"s":"S"},
	"kinds":[{"kind":"rot","label_sv":"a","label_en":"a","counts_sv":"a","counts_en":"a","conditions":[{"id":"c","sv":"a","en":"a"}]}],
	"rules":[%s]}`
	rule := func(version, from, until string, rate int) string {
		u := ""
		if until != "" {
			u = `,"paid_until":"` + until + `"`
		}
		return `{"version":"` + version + `","kind":"rot","rate_percent":` + strconv.Itoa(rate) + `,"paid_from":"` + from + `"` + u +
			`,"yearly_cap_sek":75000,"kind_yearly_cap_sek":50000,"sources":["s"]}`
	}
	tests := map[string]string{
		"overlapping dates": rule("a", "2025-01-01", "2025-12-31", 30) + "," + rule("b", "2025-06-01", "", 50),
		"open rule overlap": rule("a", "2025-01-01", "", 30) + "," + rule("b", "2026-01-01", "", 30),
		"duplicate version": rule("a", "2025-01-01", "2025-01-31", 30) + "," + rule("a", "2025-02-01", "", 30),
		"rate out of range": rule("a", "2025-01-01", "", 0),
		"bad date":          rule("a", "2025-13-01", "", 30),
		"until before from": rule("a", "2025-05-01", "2025-04-01", 30),
	}
	for name, rules := range tests {
		if _, err := taxdeduction.ParseForTest([]byte(strings.Replace(base, "%s", rules, 1))); err == nil {
			t.Errorf("%s: parse accepted it", name)
		}
	}
	ok := rule("a", "2025-01-01", "2025-12-31", 50) + "," + rule("b", "2026-01-01", "", 30)
	if _, err := taxdeduction.ParseForTest([]byte(strings.Replace(base, "%s", ok, 1))); err != nil {
		t.Errorf("valid rules refused: %v", err)
	}
}
