package booking

import (
	"testing"
	"time"

	"bokat"
	"bokat/internal/catalog"
)

// TestEstimateOfTakesTheStockholmDay checks that an option's estimate takes
// the rule of the slot's Swedish calendar day: 23:30 UTC on 31 December is
// already 1 January in Stockholm, so the 2026 ROT rule applies.
func TestEstimateOfTakesTheStockholmDay(t *testing.T) {
	t.Parallel()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		start   time.Time
		version string
		rate    int
	}{
		{"23:30 on 31 December in Stockholm", time.Date(2025, 12, 31, 22, 30, 0, 0, time.UTC), "rot_2025-05-12", 50},
		{"00:30 on 1 January in Stockholm", time.Date(2025, 12, 31, 23, 30, 0, 0, time.UTC), "rot_2026-01-01", 30},
	}
	for _, tt := range tests {
		c := OptionClaims{VerticalID: "vvs", JobTypeID: "install_faucet", AmountSEK: 2000,
			Labour: bokat.StatedLabour(100), SlotStart: tt.start, SlotEnd: tt.start.Add(time.Hour)}
		e := estimateOf(cat, c)
		if e == nil || e.RulesVersion != tt.version || e.RatePercent != tt.rate {
			t.Errorf("%s: estimate %+v, want %d %% by %s", tt.name, e, tt.rate, tt.version)
		}
	}
}
