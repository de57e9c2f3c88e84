package booking

import (
	"fmt"
	"testing"
	"time"

	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// Over many searches every eligible provider is shown: the rotation moves on
// every quarter-hour, so a day's searches for one postcode sample far more
// providers than the ten one search looks at. Within one quarter-hour the
// answer is the same (the ranking is deterministic for a query at an instant).
func TestRotationShowsEveryProviderOverADay(t *testing.T) {
	t.Parallel()
	const providers = 60
	start := local(2026, 11, 23, 0, 0) // a Monday
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	scaleSupply(t, db, providers, 0, 1, start)
	f := newFixture(t, db, "", start)
	q := query("vvs", "install_faucet", "11345", "nästa vecka")

	shown := map[string]bool{}
	for quarter := range 96 {
		f.clock.set(start.Add(time.Duration(quarter) * 15 * time.Minute))
		res := f.run(t, q)
		if len(res.Options) != DefaultMaxOptions {
			t.Fatalf("quarter %d: %d options, want %d", quarter, len(res.Options), DefaultMaxOptions)
		}
		for _, o := range res.Options {
			shown[o.Provider.ID] = true
		}
		if quarter == 0 {
			// Another search later in the same quarter-hour gives the same providers and times.
			f.clock.set(start.Add(14 * time.Minute))
			again := f.run(t, q)
			for i := range res.Options {
				a, b := res.Options[i], again.Options[i]
				if a.Provider.ID != b.Provider.ID || !a.Slot.Start.Equal(b.Slot.Start) {
					t.Fatalf("option %d differs within one quarter-hour: %s %v vs %s %v", i, a.Provider.ID, a.Slot.Start, b.Provider.ID, b.Slot.Start)
				}
			}
		}
	}
	var missing []string
	for i := range providers {
		if id := fmt.Sprintf("prv_scale_%05d", i); !shown[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d providers never shown in a day of searches: %v", len(missing), providers, missing)
	}
}
