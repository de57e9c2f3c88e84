package bokat

// Kinds of Swedish household tax reduction a job can give: ROT
// (repairs, conversion and extension of a home) and RUT (household
// services such as cleaning and moving).
const (
	TaxReductionROT = "rot"
	TaxReductionRUT = "rut"
)

// LabourShare is the part of a provider's price that is labour, in whole
// percent of the price an option shows (0–100), as the provider states it.
// Stated is false when the provider has not said: then no tax reduction is
// estimated, never guessed. The zero value is "not stated".
type LabourShare struct {
	Percent int
	Stated  bool
}

// StatedLabour returns the labour share of percent.
func StatedLabour(percent int) LabourShare { return LabourShare{Percent: percent, Stated: true} }

// TaxReductionEstimate is a preliminary ROT or RUT figure for one job: what
// the reduction would be if the customer has enough of the yearly allowance
// left and meets the conditions. It is never a granted reduction and never
// the booked price (Booking.PriceSEK stays the price). A booking keeps the
// figure it was confirmed (or last rescheduled) with, so a later change of
// the rules does not change it.
type TaxReductionEstimate struct {
	// Kind is TaxReductionROT or TaxReductionRUT.
	Kind string
	// RatePercent is the rule's rate of the labour cost including VAT.
	RatePercent int
	// LabourPercent is the provider's labour share of the price.
	LabourPercent int
	// LabourSEK is the labour part of the price, including VAT.
	LabourSEK int64
	// ReductionSEK is the estimated reduction.
	ReductionSEK int64
	// RulesVersion names the rule that gave the figure.
	RulesVersion string
}
