package booking_test

import (
	"testing"
	"time"

	"bokat/internal/booking"
	"bokat/internal/schedule"
)

// twoProviders is a supply file with two providers of the same job,
// working on weekdays from 08:00 to 17:00.
const twoProviders = `version: 1
providers:
  - id: prv_a
    name: A AB
    email: bokning@a.example
    city: Stockholm
    min_notice_minutes: 0
    postcodes: ["111-118"]
    hours: {weekdays: ["08:00-17:00"]}
    services:
      - {service_id: vvs_install_faucet_standard, price_sek: 1890, duration: {fixed_minutes: 60}}
  - id: prv_b
    name: B AB
    email: bokning@b.example
    city: Stockholm
    min_notice_minutes: 0
    postcodes: ["111-118"]
    hours: {weekdays: ["08:00-17:00"]}
    services:
      - {service_id: vvs_install_faucet_standard, price_sek: 1790, duration: {fixed_minutes: 60}}
`

// TestSearchKeepsTheClockTime checks that a clock time restricts the slots
// search offers to those starting in that hour (from 09:00 to 09:59 for
// "kl 9"; on a half-hour grid 09:00 and 09:30), and that days left out get
// no slot.
func TestSearchKeepsTheClockTime(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 26, 10, 0) // Thursday
	halfHour := func(c *booking.Config) { c.SlotStep = 30 * time.Minute }
	f := sqliteFixture(t, twoProviders, now, halfHour)
	startsIn := func(from, to time.Time) func(time.Time) bool {
		return func(s time.Time) bool { return !s.Before(from) && s.Before(to) }
	}
	notOn := func(days ...time.Weekday) func(time.Time) bool {
		return func(s time.Time) bool { return !schedule.WeekdaysOf(days...).Has(schedule.DateOf(s).Weekday()) }
	}
	tests := []struct {
		text, locale string
		ok           func(start time.Time) bool
		wantStarts   []string // the distinct slot starts, when given
	}{
		{"i morgon kl 9", "sv-SE", startsIn(local(2026, 11, 27, 9, 0), local(2026, 11, 27, 10, 0)), []string{"09:00", "09:30"}},
		{"tomorrow at 9", "en", startsIn(local(2026, 11, 27, 9, 0), local(2026, 11, 27, 10, 0)), []string{"09:00", "09:30"}},
		{"tisdag kl 10.30", "sv-SE", startsIn(local(2026, 12, 1, 10, 30), local(2026, 12, 1, 11, 30)), []string{"10:30", "11:00"}},
		{"i morgon 9-11", "sv-SE", startsIn(local(2026, 11, 27, 9, 0), local(2026, 11, 27, 10, 1)), []string{"09:00", "09:30", "10:00"}},
		{"nästa vecka men inte fredag", "sv-SE", notOn(time.Friday), nil},
		{"nästa vecka utom måndag, tisdag, onsdag och torsdag", "sv-SE",
			startsIn(local(2026, 12, 4, 0, 0), local(2026, 12, 5, 0, 0)), nil},
	}
	for _, tt := range tests {
		q := query("vvs", "install_faucet", "113 45", tt.text)
		q.Locale = tt.locale
		res := f.run(t, q)
		if !res.Window.Understood || len(res.Window.Unused) > 0 {
			t.Errorf("%q: understood %v, unused %q", tt.text, res.Window.Understood, res.Window.Unused)
		}
		if len(res.Options) == 0 {
			t.Errorf("%q: no option (%s)", tt.text, res.FallbackReason)
		}
		starts := map[string]bool{}
		for _, o := range res.Options {
			if !tt.ok(o.Slot.Start) {
				t.Errorf("%q: option at %s, outside what was asked (%s)", tt.text, o.Slot.Start.In(schedule.Stockholm()), res.Window.Label)
			}
			starts[o.Slot.Start.In(schedule.Stockholm()).Format("15:04")] = true
		}
		if tt.wantStarts != nil {
			if len(starts) != len(tt.wantStarts) {
				t.Errorf("%q: slot starts %v, want %v", tt.text, starts, tt.wantStarts)
			}
			for _, s := range tt.wantStarts {
				if !starts[s] {
					t.Errorf("%q: no slot starting %s (starts %v)", tt.text, s, starts)
				}
			}
		}
	}

	// Before the providers' hours: no option, and not the whole day instead.
	res := f.run(t, query("vvs", "install_faucet", "113 45", "i morgon kl 06"))
	if len(res.Options) != 0 || res.FallbackReason != booking.ReasonNoFreeSlot {
		t.Errorf("i morgon kl 06: %d options, reason %q; want none, %q", len(res.Options), res.FallbackReason, booking.ReasonNoFreeSlot)
	}
}
