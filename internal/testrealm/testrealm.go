// Package testrealm is the test realm's supply: the magic test providers
// (bokat.TestProvider*), offering every seeded service of the catalog
// everywhere in Sweden, each with one predictable behaviour, so that an
// integrator tries confirm, a taken slot, a failing provider message or a
// follow-up request with a test credential and never reaches a real
// provider (docs/testing.md).
package testrealm

import (
	"context"
	"fmt"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/supply"
)

// SupplyName names the test realm's supply in import results and logs.
const SupplyName = "test realm"

// Test providers' prices: what a fixed or starting price costs, and what a
// unit costs.
const (
	PriceSEK     = 1000
	UnitPriceSEK = 500
)

// magic is one magic provider: its id, name and address.
type magic struct{ id, name, email string }

var providers = []magic{
	{bokat.TestProviderFree, "Test: alltid ledig", "free@test.bokat.invalid"},
	{bokat.TestProviderTaken, "Test: upptagen vid bekräftelse", "taken@test.bokat.invalid"},
	{bokat.TestProviderUnreachable, "Test: meddelandet når inte fram", bokat.TestUnreachableEmail},
	{bokat.TestProviderFollowUpOnly, "Test: bara förfrågan", "followup@test.bokat.invalid"},
}

// Supply returns the magic test providers, in the test realm, each offering
// every seeded service of cat at PriceSEK (or UnitPriceSEK a unit), working
// every day 07:00–21:00 in every postcode.
func Supply(cat *catalog.Catalog) []bokat.ProviderSupply {
	var services []bokat.ProviderService
	for _, id := range cat.ServiceIDs() {
		svc, _ := cat.Service(id)
		offer := bokat.ProviderService{ServiceID: id, PriceSEK: PriceSEK}
		if svc.PricingModel.PerUnit() {
			offer = bokat.ProviderService{ServiceID: id, UnitPriceSEK: UnitPriceSEK}
		}
		services = append(services, offer)
	}
	var hours []bokat.WorkingRange
	for d := time.Sunday; d <= time.Saturday; d++ {
		hours = append(hours, bokat.WorkingRange{Weekday: d, StartMinute: 7 * 60, EndMinute: 21 * 60})
	}
	out := make([]bokat.ProviderSupply, 0, len(providers))
	for _, m := range providers {
		out = append(out, bokat.ProviderSupply{
			Provider: bokat.Provider{ID: m.id, Name: m.name, City: "Testby", Email: m.email, Active: true,
				Mode: bokat.ModeTest, MinNoticeMinutes: 30, HorizonDays: 30},
			Postcodes: []bokat.PostcodeRange{{From: 10000, To: 99999}},
			Services:  append([]bokat.ProviderService(nil), services...),
			Hours:     hours,
		})
	}
	return out
}

// Seed stores the test realm's supply; it changes nothing when it is
// already stored as Supply returns it.
func Seed(ctx context.Context, st supply.Store, cat *catalog.Catalog, now time.Time) (supply.Result, error) {
	res, err := supply.ImportParsed(ctx, st, SupplyName, Supply(cat), now)
	if err != nil {
		return res, fmt.Errorf("seed the test realm: %w", err)
	}
	return res, nil
}
