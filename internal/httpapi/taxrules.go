package httpapi

import (
	"fmt"

	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/taxdeduction"
)

// Wire types of the ROT and RUT rules in capability discovery
// (tax_reduction_rules) and of each job type's decision (tax_deduction).

// taxRulesWire describes the ROT and RUT rules: kinds, dated rules and how
// an estimate is computed.
type taxRulesWire struct {
	Preliminary   bool          `json:"preliminary"`
	LabelSV       string        `json:"label_sv"`
	LabelEN       string        `json:"label_en"`
	ComputationEN string        `json:"computation_en"`
	CapsApplied   bool          `json:"caps_applied"`
	Kinds         []taxKindWire `json:"kinds"`
	Rules         []taxRuleWire `json:"rules"`
}

type taxKindWire struct {
	Kind       string                     `json:"kind"`
	LabelSV    string                     `json:"label_sv"`
	LabelEN    string                     `json:"label_en"`
	CountsSV   string                     `json:"counts_sv"`
	CountsEN   string                     `json:"counts_en"`
	Conditions []booking.TaxConditionWire `json:"conditions"`
}

type taxRuleWire struct {
	Version          string   `json:"version"`
	Kind             string   `json:"kind"`
	RatePercent      int      `json:"rate_percent"`
	PaidFrom         string   `json:"paid_from"`
	PaidUntil        string   `json:"paid_until,omitempty"`
	YearlyCapSEK     int64    `json:"yearly_cap_sek"`
	KindYearlyCapSEK int64    `json:"kind_yearly_cap_sek"`
	Sources          []string `json:"sources"`
}

type taxDeductionWire struct {
	Kind    string `json:"kind"`
	BasisEN string `json:"basis_en"`
	Source  string `json:"source"`
}

// taxComputation says how an estimate is computed, for assistants.
const taxComputation = "An option or booking of a rot or rut job type carries tax_reduction_estimate when the provider " +
	"states the labour part of its price (labour_percent of the amount shown). labour_amount_sek is that share of the " +
	"price rounded to whole SEK; estimated_reduction_sek is the rule's rate_percent of it, rounded down; " +
	"price_after_reduction_sek is the price minus it. The rule is the one in force on the job's day (the day the work " +
	"is assumed paid). The yearly caps are stated, never applied: Bokat cannot know how much of the allowance the " +
	"customer has left. The booked price is always the full price."

func buildTaxRules(cat *catalog.Catalog) taxRulesWire {
	r := cat.TaxRules
	w := taxRulesWire{Preliminary: true, LabelSV: r.LabelSV, LabelEN: r.LabelEN, ComputationEN: taxComputation}
	for _, k := range []taxdeduction.Kind{taxdeduction.ROT, taxdeduction.RUT} {
		info, ok := r.Kind(k)
		if !ok {
			continue
		}
		kw := taxKindWire{Kind: string(k), LabelSV: info.LabelSV, LabelEN: info.LabelEN, CountsSV: info.CountsSV,
			CountsEN: info.CountsEN, Conditions: []booking.TaxConditionWire{}}
		for _, c := range info.Conditions {
			kw.Conditions = append(kw.Conditions, booking.TaxConditionWire{ID: c.ID, SV: c.SV, EN: c.EN})
		}
		w.Kinds = append(w.Kinds, kw)
	}
	for _, rule := range r.All() {
		rw := taxRuleWire{Version: rule.Version, Kind: string(rule.Kind), RatePercent: rule.RatePercent,
			PaidFrom: dateText(rule.PaidFrom), YearlyCapSEK: rule.YearlyCapSEK, KindYearlyCapSEK: rule.KindYearlyCapSEK,
			Sources: rule.Sources}
		if rule.PaidUntil != (schedule.Date{}) {
			rw.PaidUntil = dateText(rule.PaidUntil)
		}
		w.Rules = append(w.Rules, rw)
	}
	return w
}

func dateText(d schedule.Date) string {
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}
