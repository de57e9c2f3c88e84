package booking

import (
	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/taxdeduction"
)

// TaxEstimateWire is the contract's TaxReductionEstimate: a preliminary ROT
// or RUT figure, labelled as such, with the conditions it depends on. The
// booked price is never this figure. It is a wire type; it lives here
// because booking records (and so the events) carry it.
type TaxEstimateWire struct {
	Preliminary            bool               `json:"preliminary"`
	LabelSV                string             `json:"label_sv"`
	LabelEN                string             `json:"label_en"`
	Kind                   string             `json:"kind"`
	RatePercent            int                `json:"rate_percent"`
	LabourPercent          int                `json:"labour_percent"`
	LabourAmountSEK        int64              `json:"labour_amount_sek"`
	EstimatedReductionSEK  int64              `json:"estimated_reduction_sek"`
	PriceAfterReductionSEK int64              `json:"price_after_reduction_sek"`
	Currency               string             `json:"currency"`
	RulesVersion           string             `json:"rules_version"`
	YearlyCapSEK           int64              `json:"yearly_cap_sek"`
	KindYearlyCapSEK       int64              `json:"kind_yearly_cap_sek"`
	CapsApplied            bool               `json:"caps_applied"`
	Conditions             []TaxConditionWire `json:"conditions"`
}

// TaxConditionWire is one condition of an estimate, in Swedish and English.
type TaxConditionWire struct {
	ID string `json:"id"`
	SV string `json:"sv"`
	EN string `json:"en"`
}

// TaxEstimateWireOf returns the wire form of an estimate of a price of
// amountSEK, or nil for none. The caps and conditions are those of the
// estimate's rules version; a version the rules no longer hold (they never
// drop one) falls back to the kind's conditions without caps.
func TaxEstimateWireOf(rules *taxdeduction.Rules, e *bokat.TaxReductionEstimate, amountSEK int64) *TaxEstimateWire {
	w, ok := TaxEstimateFiguresOf(rules, e, amountSEK)
	if !ok {
		return nil
	}
	w.Conditions = TaxConditionsWireOf(rules, e.Kind)
	return &w
}

// TaxEstimateFiguresOf is TaxEstimateWireOf without the conditions
// (Conditions is nil), for encoders that write the conditions of the kind
// from a copy encoded once; false for no estimate.
func TaxEstimateFiguresOf(rules *taxdeduction.Rules, e *bokat.TaxReductionEstimate, amountSEK int64) (TaxEstimateWire, bool) {
	if e == nil || rules == nil {
		return TaxEstimateWire{}, false
	}
	w := TaxEstimateWire{
		Preliminary: true, LabelSV: rules.LabelSV, LabelEN: rules.LabelEN,
		Kind: e.Kind, RatePercent: e.RatePercent, LabourPercent: e.LabourPercent,
		LabourAmountSEK: e.LabourSEK, EstimatedReductionSEK: e.ReductionSEK,
		PriceAfterReductionSEK: max(amountSEK-e.ReductionSEK, 0), Currency: "SEK", RulesVersion: e.RulesVersion,
	}
	if rule, ok := rules.Version(e.RulesVersion); ok {
		w.YearlyCapSEK, w.KindYearlyCapSEK = rule.YearlyCapSEK, rule.KindYearlyCapSEK
	}
	return w, true
}

// TaxConditionsWireOf returns the conditions an estimate of the kind
// carries: the kind's conditions in the rules, or an empty list for a kind
// the rules do not describe. The list is the caller's.
func TaxConditionsWireOf(rules *taxdeduction.Rules, kind string) []TaxConditionWire {
	out := []TaxConditionWire{}
	if info, ok := rules.Kind(taxdeduction.Kind(kind)); ok {
		for _, c := range info.Conditions {
			out = append(out, TaxConditionWire{ID: c.ID, SV: c.SV, EN: c.EN})
		}
	}
	return out
}

// estimateOf returns the preliminary ROT/RUT estimate of an option from
// what its claims carry — the job type, the amount, the provider's labour
// share and the slot's day — or nil for none. Search, confirmation and
// rescheduling all compute it here, so they give the same figure.
func estimateOf(cat *catalog.Catalog, c OptionClaims) *bokat.TaxReductionEstimate {
	jt, ok := cat.JobType(c.VerticalID, c.JobTypeID)
	if !ok || cat.TaxRules == nil {
		return nil
	}
	e, ok := cat.TaxRules.Estimate(taxdeduction.Job{Kind: jt.TaxDeduction.Kind, AmountSEK: c.AmountSEK,
		Labour: c.Labour, PaidOn: schedule.DateOf(c.SlotStart)})
	if !ok {
		return nil
	}
	return &e
}

// stampTaxEstimate computes the estimate of the option c and records its
// rules version in c before c is signed; it returns the estimate or nil.
func (s *Search) stampTaxEstimate(c *OptionClaims) *bokat.TaxReductionEstimate {
	e := estimateOf(s.cat, *c)
	c.TaxRulesVersion = ""
	if e != nil {
		c.TaxRulesVersion = e.RulesVersion
	}
	return e
}

// checkTaxEstimate reports whether the option's estimate still holds: the
// provider states the same labour share, and the current catalog and rules
// give the option an estimate of the same rules version.
func checkTaxEstimate(cat *catalog.Catalog, c OptionClaims, current bokat.LabourShare) error {
	if current != c.Labour {
		return optionChanged("the provider's labour part of the price changed")
	}
	version := ""
	if e := estimateOf(cat, c); e != nil {
		version = e.RulesVersion
	}
	if version != c.TaxRulesVersion {
		return optionChanged("the ROT/RUT rules for this job changed")
	}
	return nil
}

// TaxEstimateNextStep is what the safe_next_step of a response carrying
// estimates adds: how to phrase them. It is "" when none of them has one.
func TaxEstimateNextStep(some bool) string {
	if !some {
		return ""
	}
	return " Some options carry tax_reduction_estimate, a preliminary ROT/RUT figure: give the full price first " +
		"(amount_sek, the only price that is booked), then say the customer would pay about " +
		"price_after_reduction_sek after the deduction only if they qualify and have enough of this year's allowance " +
		"left, and name its conditions. Never present it as granted or as the booked price, never estimate a " +
		"reduction for an option without one, and never ask for a personal identity number: the provider asks for it " +
		"at invoicing."
}

// optionsHaveEstimate reports whether any option carries an estimate.
func optionsHaveEstimate(opts []Option) bool {
	for _, o := range opts {
		if o.TaxReduction != nil {
			return true
		}
	}
	return false
}
