package booking

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"bokat"
	"bokat/internal/schedule"
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
		{"minutes past int16", bokat.ProviderService{ServiceID: "svc_a", PriceSEK: 900, Duration: bokat.DurationOverride{MinutesPerUnit: 1 << 16}}, false},
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

// A snapshot built beside the one it replaces keeps that one's entry of
// every provider whose supply did not change, and serves exactly what a
// snapshot built from nothing serves: the same providers per service, each
// with the same facts and offers.
func TestSnapshotBuiltBesideKeepsTheUnchangedProviders(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 29))
		before := randomProviders(rng, "prv", 30)
		after := mutateProviders(rng, before)
		old := newSnapshot(Supply{Revision: 1, Providers: before})
		b := newSnapshotBuilder(old)
		for lo := 0; lo < len(after); lo += 7 { // in runs, as the store hands them
			b.add(after[lo:min(lo+7, len(after))])
		}
		got, want := b.done(2), newSnapshot(Supply{Revision: 2, Providers: after})
		if got.revision != 2 || got.providers != want.providers || len(got.byService) != len(want.byService) {
			t.Fatalf("seed %d: revision %d, %d providers, %d services; want 2, %d, %d", seed, got.revision,
				got.providers, len(got.byService), want.providers, len(want.byService))
		}
		for id, wl := range want.byService {
			gl := got.byService[id]
			if len(gl) != len(wl) {
				t.Fatalf("seed %d, %s: %d providers, want %d", seed, id, len(gl), len(wl))
			}
			for i := range wl {
				if g, w := describeEntry(got, gl[i]), describeEntry(want, wl[i]); !reflect.DeepEqual(g, w) {
					t.Errorf("seed %d, %s: entry\n%+v\nwant\n%+v", seed, id, g, w)
				}
			}
		}
		// Every unchanged active provider (without hours of single dates)
		// is the old entry itself; every changed one is new.
		was := map[string]bokat.ProviderSupply{}
		for _, p := range before {
			was[p.ID] = p
		}
		oldEntry := map[string]*providerEntry{}
		for _, l := range old.byService {
			for _, e := range l {
				oldEntry[e.provider.ID] = e
			}
		}
		kept := 0
		for _, l := range got.byService {
			for _, e := range l {
				p, existed := was[e.provider.ID]
				same := existed && reflect.DeepEqual(p, after[slices.IndexFunc(after, func(q bokat.ProviderSupply) bool {
					return q.ID == e.provider.ID
				})]) && len(p.DayHours) == 0
				if isOld := e == oldEntry[e.provider.ID]; isOld != same {
					t.Errorf("seed %d, %s: the old entry kept %v, want %v", seed, e.provider.ID, isOld, same)
				} else if isOld {
					kept++
				}
			}
		}
		if b.kept == 0 || b.kept > kept {
			t.Errorf("seed %d: %d entries kept, %d seen kept", seed, b.kept, kept)
		}
	}
}

// entryFacts is what search reads of an entry, without its place in memory
// or its snapshot's service numbers.
type entryFacts struct {
	Provider  bokat.Provider
	Postcodes []bokat.PostcodeRange
	Paused    time.Time
	Hours     schedule.WeeklyHours
	HoursKey  string
	Days      map[schedule.Date]dayHours
	Offers    map[string]bokat.ProviderService
}

func describeEntry(snap *snapshot, e *providerEntry) entryFacts {
	f := entryFacts{Provider: e.provider, Postcodes: e.postcodes, Paused: e.pausedUntil, Hours: *e.hours,
		HoursKey: e.hoursKey, Days: e.days, Offers: map[string]bokat.ProviderService{}}
	for id := range snap.byService {
		if o, ok := e.service(id, snap.number(id)); ok {
			f.Offers[id] = o
		}
	}
	return f
}

var testServices = []string{"svc_a", "svc_b", "svc_c", "svc_d"}

func randomProviders(rng *rand.Rand, prefix string, n int) []bokat.ProviderSupply {
	out := make([]bokat.ProviderSupply, n)
	for i := range out {
		p := bokat.ProviderSupply{Provider: bokat.Provider{ID: fmt.Sprintf("%s_%03d", prefix, i), Name: "Firma", City: "Stockholm",
			Active: rng.IntN(8) > 0, HorizonDays: 14}}
		p.Postcodes = []bokat.PostcodeRange{{From: 11100 + 100*rng.IntN(5), To: 11899}}
		for _, s := range testServices {
			if rng.IntN(3) > 0 {
				p.Services = append(p.Services, bokat.ProviderService{ServiceID: s, PriceSEK: int64(1000 + rng.IntN(3))})
			}
		}
		p.Hours = []bokat.WorkingRange{{Weekday: time.Monday, StartMinute: 480, EndMinute: 960 + 60*rng.IntN(2)}}
		if rng.IntN(6) == 0 {
			p.DayHours = []bokat.DayHours{{Day: "2026-12-01", StartMinute: 600, EndMinute: 720}}
		}
		out[i] = p
	}
	return out
}

// mutateProviders returns a copy of ps with some providers changed in one
// fact each, some removed and some added.
func mutateProviders(rng *rand.Rand, ps []bokat.ProviderSupply) []bokat.ProviderSupply {
	var out []bokat.ProviderSupply
	for _, p := range ps {
		p.Postcodes, p.Services, p.Hours = slices.Clone(p.Postcodes), slices.Clone(p.Services), slices.Clone(p.Hours)
		switch rng.IntN(12) {
		case 0:
			continue // removed
		case 1:
			p.Active = !p.Active
		case 2:
			if len(p.Services) > 0 {
				p.Services[0].PriceSEK++
			}
		case 3:
			p.Services = append(p.Services, bokat.ProviderService{ServiceID: "svc_new", UnitPriceSEK: 90})
		case 4:
			p.Postcodes[0].To--
		case 5:
			p.Hours[0].EndMinute -= 30
		case 6:
			p.PausedUntil = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
		case 7:
			p.Name += " AB"
		case 8:
			if len(p.Services) > 0 {
				p.Services[0].PriceSEK = 1 << 40 // kept as supplied, not compact
			}
		}
		out = append(out, p)
	}
	return append(out, randomProviders(rng, "prv_new", 2)...)
}
