package booking_test

import (
	"strings"
	"testing"
	"time"

	"bokat/internal/booking"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestSearchSaysWhyTheWindowIsEmpty: a window past every candidate's
// booking horizon answers its own reason and the last bookable date, not
// "no free slot"; a window the providers' hours leave empty offers the
// first later free times, on the same day for a clock time.
func TestSearchSaysWhyTheWindowIsEmpty(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) { testSearchSaysWhyTheWindowIsEmpty(t, db) })
}

func testSearchSaysWhyTheWindowIsEmpty(t *testing.T, db *sqlstore.DB) {
	now := local(2026, 11, 23, 9, 0) // a Monday; the default horizon of 14 days ends on 7 December at 09:00
	f := newFixture(t, db, oneProvider, now)
	tests := []struct {
		text       string
		wantReason string
		wantLast   schedule.Date
		// wantNext is the first next_available start, zero for none.
		wantNext time.Time
	}{
		{"om tre veckor", booking.ReasonBeyondHorizon, schedule.NewDate(2026, 12, 7), time.Time{}},
		{"på juldagen", booking.ReasonBeyondHorizon, schedule.NewDate(2026, 12, 7), time.Time{}},
		{"in three weeks", booking.ReasonBeyondHorizon, schedule.NewDate(2026, 12, 7), time.Time{}},
		// The provider starts at 08:00: the first later slot is tomorrow at 08.
		{"i morgon kl 06", booking.ReasonNoFreeSlot, schedule.Date{}, local(2026, 11, 24, 8, 0)},
		{"tomorrow at 6am", booking.ReasonNoFreeSlot, schedule.Date{}, local(2026, 11, 24, 8, 0)},
		// After the working day, the first later slot is the next morning.
		{"i morgon efter 18", booking.ReasonNoFreeSlot, schedule.Date{}, local(2026, 11, 25, 8, 0)},
		// A Sunday: Monday's first slot, as before.
		{"på söndag", booking.ReasonNoFreeSlot, schedule.Date{}, local(2026, 11, 30, 8, 0)},
		// The 14th day is inside the horizon until 09:00 and has a slot at 08.
		{"7 december", "", schedule.Date{}, time.Time{}},
	}
	for _, tc := range tests {
		res := f.run(t, query("vvs", "install_faucet", "11345", tc.text))
		if !res.Window.Understood {
			t.Errorf("%q: the window was not understood (%s)", tc.text, res.Window.Label)
			continue
		}
		if tc.wantReason == "" {
			if len(res.Options) == 0 {
				t.Errorf("%q: no options (%s), want some", tc.text, res.FallbackReason)
			}
			continue
		}
		if len(res.Options) != 0 || res.FallbackReason != tc.wantReason {
			t.Errorf("%q: %d options, reason %q; want none, %q", tc.text, len(res.Options), res.FallbackReason, tc.wantReason)
		}
		if res.LastBookableDate != tc.wantLast {
			t.Errorf("%q: last bookable date %v, want %v", tc.text, res.LastBookableDate, tc.wantLast)
		}
		switch {
		case tc.wantNext.IsZero() && len(res.NextAvailable) != 0:
			t.Errorf("%q: next available %v, want none", tc.text, res.NextAvailable)
		case !tc.wantNext.IsZero() && (len(res.NextAvailable) == 0 || !res.NextAvailable[0].Slot.Start.Equal(tc.wantNext)):
			t.Errorf("%q: next available %v, want first %v", tc.text, res.NextAvailable, tc.wantNext)
		}
		if tc.wantReason == booking.ReasonBeyondHorizon && !strings.Contains(res.SafeNextStep, "last_bookable_date") {
			t.Errorf("%q: safe next step %q does not name last_bookable_date", tc.text, res.SafeNextStep)
		}
	}

	// A provider who books further ahead moves the last bookable date, and
	// makes Christmas Day an ordinary day off: no free slot, not the horizon.
	longer := oneProvider + strings.ReplaceAll(strings.ReplaceAll(oneProvider[strings.Index(oneProvider, "  - id:"):],
		"prv_one", "prv_two"), "    min_notice_minutes: 0\n", "    min_notice_minutes: 0\n    horizon_days: 40\n")
	g := newFixture(t, sqlstoretest.Open(t, db.Engine()), longer, now)
	if res := g.run(t, query("vvs", "install_faucet", "11345", "på juldagen")); res.FallbackReason != booking.ReasonNoFreeSlot ||
		res.LastBookableDate != (schedule.Date{}) || len(res.NextAvailable) == 0 {
		t.Errorf("juldagen with a 40-day horizon: reason %q, last bookable %v, next %v; want %q with next available",
			res.FallbackReason, res.LastBookableDate, res.NextAvailable, booking.ReasonNoFreeSlot)
	}
	if res := g.run(t, query("vvs", "install_faucet", "11345", "om tio veckor")); res.FallbackReason != booking.ReasonBeyondHorizon ||
		res.LastBookableDate != schedule.NewDate(2027, 1, 2) {
		t.Errorf("in ten weeks with a 40-day horizon: reason %q, last bookable %v; want %q, 2027-01-02",
			res.FallbackReason, res.LastBookableDate, booking.ReasonBeyondHorizon)
	}
}
