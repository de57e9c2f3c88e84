package booking

import (
	"testing"

	"bokat"
)

// The snapshot keeps offers compactly; every offer it serves must be the
// provider's offer as the supply has it, in or out of the compact form's
// range.
func TestSnapshotServesEveryOfferAsSupplied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		offer   bokat.ProviderService
		compact bool
	}{
		{"flat", bokat.ProviderService{ServiceID: "svc_a", PriceSEK: 1200}, true},
		{"per unit with labour", bokat.ProviderService{ServiceID: "svc_a", UnitPriceSEK: 450, MinimumChargeSEK: 900,
			Duration: bokat.DurationOverride{MinutesPerUnit: 30, MinimumMinutes: 60}, Labour: bokat.StatedLabour(0)}, true},
		{"format's largest", bokat.ProviderService{ServiceID: "svc_a", PriceSEK: 10_000_000, UnitPriceSEK: 10_000_000,
			MinimumChargeSEK: 10_000_000, Duration: bokat.DurationOverride{FixedMinutes: 1440}, Labour: bokat.StatedLabour(100)}, true},
		{"price past int32", bokat.ProviderService{ServiceID: "svc_a", PriceSEK: 1 << 40}, false},
		{"labour past int8", bokat.ProviderService{ServiceID: "svc_a", Labour: bokat.StatedLabour(300)}, false},
		{"unstated labour with a percent", bokat.ProviderService{ServiceID: "svc_a", Labour: bokat.LabourShare{Percent: 30}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			other := bokat.ProviderService{ServiceID: "svc_b", PriceSEK: 700}
			p := bokat.ProviderSupply{Provider: bokat.Provider{ID: "prv_1", Active: true},
				Services: []bokat.ProviderService{other, tt.offer},
				Hours:    []bokat.WorkingRange{{Weekday: 1, StartMinute: 480, EndMinute: 960}}}
			snap := newSnapshot(Supply{Revision: 1, Providers: []bokat.ProviderSupply{p}})
			e := snap.byService["svc_a"][0]
			if gotCompact := e.wide == nil; gotCompact != tt.compact {
				t.Errorf("compact: got %v, want %v", gotCompact, tt.compact)
			}
			for _, want := range []bokat.ProviderService{other, tt.offer} {
				got, ok := e.service(want.ServiceID, snap.number(want.ServiceID))
				if !ok || got != want {
					t.Errorf("service %s: got %+v (%v), want %+v", want.ServiceID, got, ok, want)
				}
			}
			if _, ok := e.service("svc_none", snap.number("svc_none")); ok {
				t.Error("an offer of a service the provider does not offer")
			}
		})
	}
}

// Providers with equal weekly hours share them.
func TestSnapshotSharesEqualHours(t *testing.T) {
	t.Parallel()
	hours := []bokat.WorkingRange{{Weekday: 1, StartMinute: 480, EndMinute: 960}}
	var ps []bokat.ProviderSupply
	for _, id := range []string{"prv_1", "prv_2"} {
		ps = append(ps, bokat.ProviderSupply{Provider: bokat.Provider{ID: id, Active: true},
			Services: []bokat.ProviderService{{ServiceID: "svc_a", PriceSEK: 1}}, Hours: hours})
	}
	ps = append(ps, bokat.ProviderSupply{Provider: bokat.Provider{ID: "prv_3", Active: true},
		Services: []bokat.ProviderService{{ServiceID: "svc_a", PriceSEK: 1}},
		Hours:    []bokat.WorkingRange{{Weekday: 2, StartMinute: 480, EndMinute: 960}}})
	es := newSnapshot(Supply{Revision: 1, Providers: ps}).byService["svc_a"]
	if es[0].hours != es[1].hours {
		t.Error("equal hours held twice")
	}
	if es[0].hours == es[2].hours || es[2].hours[2][0].Start != 480 {
		t.Errorf("other hours shared or wrong: %v", *es[2].hours)
	}
}
