package booking_test

import (
	"testing"

	"bokat/internal/booking"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// yearEndPlumber has one faucet slot each weekday morning and states that
// its whole price is labour, so an option's estimate is the rule's rate of
// the price.
const yearEndPlumber = `version: 1
providers:
  - id: prv_year_end
    name: Årsskiftet Rör AB
    email: bokning@arsskiftet.example
    min_notice_minutes: 0
    postcodes: ["113"]
    hours: {weekdays: ["08:00-09:00"]}
    services:
      - {service_id: vvs_install_faucet_standard, price_sek: 2000, labour_percent: 100, duration: {fixed_minutes: 60}}
`

// TestTaxEstimateTakesTheRuleOfTheJobsDay checks the effective-date switch
// where assistants see it: one search made on 2025-12-29 returns ROT at 50 %
// (the temporary rule) for jobs done in 2025 and at 30 % for jobs done from
// 2026-01-01, because the rule is the one of the job's day (the day the work
// is assumed paid), not of the day of the search. On both engines.
func TestTaxEstimateTakesTheRuleOfTheJobsDay(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		now := local(2025, 12, 29, 7, 0) // a Monday
		f := newFixture(t, db, yearEndPlumber, now, func(c *booking.Config) { c.MaxPerProvider, c.MaxOptions = 10, 10 })
		res := f.run(t, query("vvs", "install_faucet", "11345", ""))
		if len(res.Options) == 0 {
			t.Fatal("no options")
		}
		var in2025, in2026 int
		for _, o := range res.Options {
			e := o.TaxReduction
			if e == nil {
				t.Errorf("option on %v has no estimate", o.Slot.Start)
				continue
			}
			day := schedule.DateOf(o.Slot.Start)
			wantRate, wantVersion := 30, "rot_2026-01-01"
			if day.Year == 2025 {
				wantRate, wantVersion = 50, "rot_2025-05-12"
				in2025++
			} else {
				in2026++
			}
			if e.RatePercent != wantRate || e.RulesVersion != wantVersion || e.LabourSEK != 2000 || e.ReductionSEK != int64(20*wantRate) {
				t.Errorf("option on %v: estimate %+v, want %d %% of 2000 SEK by %s", day, *e, wantRate, wantVersion)
			}
			if o.Claims.TaxRulesVersion != wantVersion {
				t.Errorf("option on %v is signed with rules version %q, want %s", day, o.Claims.TaxRulesVersion, wantVersion)
			}
		}
		if in2025 == 0 || in2026 == 0 {
			t.Errorf("options in 2025: %d, in 2026: %d; the search should reach both sides of the switch", in2025, in2026)
		}
	})
}
