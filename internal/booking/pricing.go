package booking

import (
	"math"
	"time"

	"bokat"
	"bokat/internal/catalog"
)

// Price is a provider's price of one job, in whole SEK.
type Price struct {
	AmountSEK    int64
	PricingModel catalog.PricingModel
	PriceType    catalog.PriceType
	// UnitPriceSEK, Quantity and Unit are set for per-unit services;
	// Quantity is 1 otherwise.
	UnitPriceSEK int64
	Quantity     float64
	Unit         string
	// MinimumChargeSEK is the provider's least amount of a per-unit job, and
	// MinimumApplied reports that it decided AmountSEK.
	MinimumChargeSEK int64
	MinimumApplied   bool
	// Labour is the provider's stated labour share of AmountSEK (of the
	// amount, whatever the pricing model), when it states one.
	Labour bokat.LabourShare
}

// PriceOf prices a job of the given quantity with a provider's offer: the
// flat (or starting) price, or the unit price times the quantity rounded to
// whole SEK (half up), raised to the provider's minimum charge.
func PriceOf(svc catalog.Service, offer bokat.ProviderService, quantity float64) Price {
	p := Price{PricingModel: svc.PricingModel, PriceType: svc.PriceType, Quantity: 1, Labour: offer.Labour}
	if !svc.PricingModel.PerUnit() {
		p.AmountSEK = offer.PriceSEK
		return p
	}
	p.UnitPriceSEK, p.Quantity, p.Unit, p.MinimumChargeSEK = offer.UnitPriceSEK, quantity, svc.Unit, offer.MinimumChargeSEK
	p.AmountSEK = int64(math.Floor(float64(offer.UnitPriceSEK)*quantity + 0.5))
	if p.AmountSEK < offer.MinimumChargeSEK {
		p.AmountSEK, p.MinimumApplied = offer.MinimumChargeSEK, true
	}
	return p
}

// JobDuration is how long a job of the quantity takes the provider: the
// provider's own rule when it has one, else the catalog's, rounded up to a
// quarter of an hour.
func JobDuration(svc catalog.Service, offer bokat.ProviderService, quantity float64) time.Duration {
	rule := svc.Duration
	switch o := offer.Duration; {
	case o.FixedMinutes > 0:
		rule = catalog.DurationRule{FixedMinutes: o.FixedMinutes}
	case o.MinutesPerUnit > 0:
		rule = catalog.DurationRule{MinutesPerUnit: o.MinutesPerUnit, MinimumMinutes: o.MinimumMinutes}
	}
	return time.Duration(rule.Minutes(quantity)) * time.Minute
}
