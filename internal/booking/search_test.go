package booking_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/clocktest"
	"bokat/internal/logtest"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

func testCatalog(tb testing.TB) *catalog.Catalog {
	tb.Helper()
	c, err := catalog.Load()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// The option tests' helpers (option_test.go, inside the package).
var key, mustKeyring, wantCode = booking.TestKey, booking.MustKeyring, booking.WantCode

func local(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, schedule.Stockholm())
}

// fixture is a Search on a real store loaded with a supply file.
type fixture struct {
	db     *sqlstore.DB
	search *booking.Search
	clock  *clocktest.Clock
	keys   *booking.Keyring
	cfg    booking.Config
}

type fixtureOption func(*booking.Config)

func newFixture(tb testing.TB, db *sqlstore.DB, supplyFile string, now time.Time, opts ...fixtureOption) *fixture {
	tb.Helper()
	if supplyFile != "" {
		if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](db), testCatalog(tb), "test.yaml", []byte(supplyFile), now); err != nil {
			tb.Fatalf("import supply: %v", err)
		}
	}
	f := &fixture{db: db, clock: clocktest.New(now.UTC()), keys: mustKeyring(tb, key("test", 3))}
	cfg := booking.Config{Catalog: testCatalog(tb), Store: db, Keys: f.keys, Now: f.clock.Now}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := booking.NewSearch(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	f.search, f.cfg = s, cfg
	return f
}

// lifecycle returns a Lifecycle over the fixture's store with its
// search's catalog, keys and clock.
func (f *fixture) lifecycle(onQueued func()) (*booking.Lifecycle, error) {
	return booking.NewLifecycle(booking.LifecycleConfig{Store: sqlstore.Bind[booking.Tx](f.db), Catalog: f.cfg.Catalog,
		Keys: f.cfg.Keys, Now: f.cfg.Now, OnQueued: onQueued})
}

func sqliteFixture(tb testing.TB, supplyFile string, now time.Time, opts ...fixtureOption) *fixture {
	return newFixture(tb, sqlstoretest.Open(tb, sqlstore.SQLite), supplyFile, now, opts...)
}

func demoFile() string { return string(supply.Demo()) }

func query(vertical, jobType, postcode, preferred string) booking.Query {
	return booking.Query{VerticalID: vertical, JobTypeID: jobType, Postcode: postcode, PreferredTimeText: preferred, Locale: "sv-SE"}
}

func (f *fixture) run(tb testing.TB, q booking.Query) booking.Result {
	tb.Helper()
	res, err := f.search.Search(context.Background(), q)
	if err != nil {
		tb.Fatalf("Search(%+v): %v", q, err)
	}
	return res
}

// oneProvider is a supply file with one provider offering a few services.
const oneProvider = `version: 1
providers:
  - id: prv_one
    name: Ett Företag AB
    email: bokning@ett-foretag.example
    city: Stockholm
    min_notice_minutes: 0
    postcodes: ["111-118"]
    hours: {weekdays: ["08:00-17:00"]}
    services:
      - {service_id: vvs_install_faucet_standard, price_sek: 1890, duration: {fixed_minutes: 60}}
      - {service_id: vvs_drain_jetting_single_starting, price_sek: 1495}
      - {service_id: electrician_install_spotlights_per_item, unit_price_sek: 650, minimum_charge_sek: 1950}
      - {service_id: moving_packing_two_packers_2h, unit_price_sek: 1190}
      - {service_id: cleaning_move_out_per_sqm, unit_price_sek: 45, minimum_charge_sek: 2500}
      - {service_id: cleaning_window_per_window, unit_price_sek: 89, minimum_charge_sek: 795}
`

func TestPriceOfEachPricingModel(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	svc := func(id string) catalog.Service {
		s, ok := cat.Service(id)
		if !ok {
			t.Fatalf("no service %s", id)
		}
		return s
	}
	tests := []struct {
		name     string
		service  string
		offer    bokat.ProviderService
		quantity float64
		want     booking.Price
	}{
		{"flat", "vvs_install_faucet_standard", bokat.ProviderService{PriceSEK: 1890}, 1,
			booking.Price{AmountSEK: 1890, PricingModel: catalog.PricingFlat, PriceType: catalog.PriceAvgFixed, Quantity: 1}},
		{"starting_price", "vvs_drain_jetting_single_starting", bokat.ProviderService{PriceSEK: 1495}, 1,
			booking.Price{AmountSEK: 1495, PricingModel: catalog.PricingStartingPrice, PriceType: catalog.PriceStartingPrice, Quantity: 1}},
		{"per_item above the minimum", "electrician_install_spotlights_per_item", bokat.ProviderService{UnitPriceSEK: 650, MinimumChargeSEK: 1950}, 6,
			booking.Price{AmountSEK: 3900, PricingModel: catalog.PricingPerItem, PriceType: catalog.PriceAvgUnit, UnitPriceSEK: 650, Quantity: 6, Unit: "st", MinimumChargeSEK: 1950}},
		{"per_item minimum applied", "electrician_install_spotlights_per_item", bokat.ProviderService{UnitPriceSEK: 650, MinimumChargeSEK: 1950}, 2,
			booking.Price{AmountSEK: 1950, PricingModel: catalog.PricingPerItem, PriceType: catalog.PriceAvgUnit, UnitPriceSEK: 650, Quantity: 2, Unit: "st", MinimumChargeSEK: 1950, MinimumApplied: true}},
		{"per_hour fractional", "moving_packing_two_packers_2h", bokat.ProviderService{UnitPriceSEK: 1190}, 2.5,
			booking.Price{AmountSEK: 2975, PricingModel: catalog.PricingPerHour, PriceType: catalog.PriceAvgUnit, UnitPriceSEK: 1190, Quantity: 2.5, Unit: "timme"}},
		{"per_sqm rounds half up", "cleaning_move_out_per_sqm", bokat.ProviderService{UnitPriceSEK: 45}, 62.3,
			booking.Price{AmountSEK: 2804, PricingModel: catalog.PricingPerSqm, PriceType: catalog.PriceAvgUnit, UnitPriceSEK: 45, Quantity: 62.3, Unit: "kvm"}},
		{"per_window", "cleaning_window_per_window", bokat.ProviderService{UnitPriceSEK: 89, MinimumChargeSEK: 795}, 12,
			booking.Price{AmountSEK: 1068, PricingModel: catalog.PricingPerWindow, PriceType: catalog.PriceAvgUnit, UnitPriceSEK: 89, Quantity: 12, Unit: "fönster", MinimumChargeSEK: 795}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := booking.PriceOf(svc(tc.service), tc.offer, tc.quantity); got != tc.want {
				t.Errorf("PriceOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSearchPricesEachModelFromTheProvidersOwnPrice(t *testing.T) {
	t.Parallel()
	f := sqliteFixture(t, oneProvider, local(2026, 11, 23, 9, 0))
	tests := []struct {
		name          string
		vertical, job string
		details       map[string]any
		amount        int64
		unitPrice     int64
		quantity      float64
		unit          string
		minutes       int
	}{
		{"flat with provider duration", "vvs", "install_faucet", nil, 1890, 0, 1, "", 60},
		{"starting_price", "vvs", "clog_fixture", nil, 1495, 0, 1, "", 90},
		{"per_item default quantity", "electrician", "electrical_install_spotlights", nil, 3900, 650, 6, "st", 180},
		{"per_item minimum charge", "electrician", "electrical_install_spotlights", map[string]any{"spot_count": 2}, 1950, 650, 2, "st", 60},
		{"per_hour", "moving", "moving_packing", map[string]any{"hours": 3}, 3570, 1190, 3, "timme", 180},
		{"per_sqm", "cleaning", "cleaning_move_out", map[string]any{"home_size_sqm": 74}, 3330, 45, 74, "kvm", 225},
		{"per_sqm minimum charge", "cleaning", "cleaning_move_out", map[string]any{"home_size_sqm": 40}, 2500, 45, 40, "kvm", 120},
		{"per_window", "cleaning", "cleaning_window", map[string]any{"window_count": 12}, 1068, 89, 12, "fönster", 120},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := query(tc.vertical, tc.job, "113 45", "nästa vecka")
			q.Details = tc.details
			res := f.run(t, q)
			if len(res.Options) == 0 {
				t.Fatalf("no options: %s", res.FallbackReason)
			}
			for _, o := range res.Options {
				p, c := o.Price, o.Claims
				if p.AmountSEK != tc.amount || p.UnitPriceSEK != tc.unitPrice || p.Quantity != tc.quantity || p.Unit != tc.unit {
					t.Errorf("price = %+v, want amount %d unit price %d × %v %s", p, tc.amount, tc.unitPrice, tc.quantity, tc.unit)
				}
				if c.AmountSEK != p.AmountSEK || c.UnitPriceSEK != p.UnitPriceSEK || c.Quantity != p.Quantity ||
					c.MinimumChargeSEK != p.MinimumChargeSEK || c.TermsVersion != catalog.TermsVersion(o.Service.ID) {
					t.Errorf("claims %+v do not carry the price %+v", c, p)
				}
				if got := o.Slot.Duration(); got != time.Duration(tc.minutes)*time.Minute {
					t.Errorf("slot lasts %v, want %d minutes", got, tc.minutes)
				}
			}
		})
	}
}

func TestSearchQuantityRules(t *testing.T) {
	t.Parallel()
	f := sqliteFixture(t, oneProvider, local(2026, 11, 23, 9, 0))
	q := query("electrician", "electrical_install_spotlights", "11345", "nästa vecka")
	q.Details = map[string]any{"spot_count": 21} // the fixed price covers 1 to 20
	res := f.run(t, q)
	if len(res.Options) != 0 || res.FallbackReason != booking.ReasonQuantityOutOfRange || !strings.Contains(res.SafeNextStep, "quote") {
		t.Errorf("out of range: %d options, reason %q, step %q", len(res.Options), res.FallbackReason, res.SafeNextStep)
	}
	q.Details = map[string]any{"spot_count": "many"}
	_, err := f.search.Search(context.Background(), q)
	e := wantCode(t, err, bokat.CodeValidationFailed)
	if !slices.Equal(e.Issues, []string{"details.spot_count: must be a positive number"}) {
		t.Errorf("issues = %q", e.Issues)
	}
}

func TestSearchRefusesContactDataInDetails(t *testing.T) {
	t.Parallel()
	f := sqliteFixture(t, oneProvider, local(2026, 11, 23, 9, 0))
	q := query("vvs", "install_faucet", "11345", "nästa vecka")
	q.Details = map[string]any{"floor": 3, "Phone": "0701234567", "contact": map[string]any{"e-mail": "a@b.se"}}
	_, err := f.search.Search(context.Background(), q)
	e := wantCode(t, err, bokat.CodeValidationFailed)
	if len(e.Issues) != 2 || !strings.HasPrefix(e.Issues[0], "details.Phone: must not be sent") ||
		!strings.HasPrefix(e.Issues[1], "details.contact.e-mail: must not be sent") {
		t.Errorf("issues = %q", e.Issues)
	}
	for _, issue := range e.Issues {
		if strings.Contains(issue, "0701234567") || strings.Contains(issue, "a@b.se") {
			t.Errorf("issue %q echoes contact data", issue)
		}
	}
}

// slotDays returns the Stockholm dates of the options, and fails on any
// slot outside 08:00–17:00 local time.
func slotDays(t *testing.T, opts []booking.Option) []schedule.Date {
	t.Helper()
	var days []schedule.Date
	for _, o := range opts {
		start, end := o.Slot.Start.In(schedule.Stockholm()), o.Slot.End.In(schedule.Stockholm())
		if start.Hour() < 8 || end.Hour()*60+end.Minute() > 17*60 || schedule.DateOf(start) != schedule.DateOf(end) {
			t.Errorf("slot %s–%s is outside 08:00–17:00 Stockholm time", start, end)
		}
		if d := schedule.DateOf(start); len(days) == 0 || days[len(days)-1] != d {
			days = append(days, d)
		}
	}
	return days
}

func many(c *booking.Config) { c.MaxPerProvider, c.MaxOptions = 500, 500 }

func TestSearchAcrossTheSpringDSTChangeAndEaster(t *testing.T) {
	t.Parallel()
	// Thursday 26 March 2026; DST starts Sunday 29 March; Easter: långfredagen
	// 3 April and annandag påsk 6 April are days off.
	f := sqliteFixture(t, oneProvider, local(2026, 3, 26, 9, 0), many)
	res := f.run(t, query("vvs", "install_faucet", "11345", "flexibel"))
	days := slotDays(t, res.Options)
	want := []schedule.Date{schedule.NewDate(2026, 3, 26), schedule.NewDate(2026, 3, 27), schedule.NewDate(2026, 3, 30), schedule.NewDate(2026, 3, 31), schedule.NewDate(2026, 4, 1), schedule.NewDate(2026, 4, 2), schedule.NewDate(2026, 4, 7), schedule.NewDate(2026, 4, 8), schedule.NewDate(2026, 4, 9)}
	if !slices.Equal(days, want) {
		t.Errorf("slot days = %v, want %v", days, want)
	}
	first := func(d schedule.Date) time.Time {
		for _, o := range res.Options {
			if schedule.DateOf(o.Slot.Start) == d {
				return o.Slot.Start
			}
		}
		t.Fatalf("no slot on %s", d)
		return time.Time{}
	}
	if got := first(schedule.NewDate(2026, 3, 27)); !got.Equal(time.Date(2026, 3, 27, 7, 0, 0, 0, time.UTC)) {
		t.Errorf("Friday before the change starts %s, want 08:00 CET (07:00 UTC)", got)
	}
	if got := first(schedule.NewDate(2026, 3, 30)); !got.Equal(time.Date(2026, 3, 30, 6, 0, 0, 0, time.UTC)) {
		t.Errorf("Monday after the change starts %s, want 08:00 CEST (06:00 UTC)", got)
	}
	// One-hour slots starting on the hour: 09–16 on the first day (no notice),
	// 08–16 on the 7 full days, and 08:00 on 9 April, the window ending 09:00.
	if n := len(res.Options); n != 8+7*9+1 {
		t.Errorf("%d slots, want %d", n, 8+7*9+1)
	}
}

func TestSearchAcrossTheAutumnDSTChange(t *testing.T) {
	t.Parallel()
	// DST ends Sunday 25 October 2026.
	f := sqliteFixture(t, oneProvider, local(2026, 10, 22, 7, 0), many)
	res := f.run(t, query("vvs", "install_faucet", "11345", "inom en vecka"))
	days := slotDays(t, res.Options)
	want := []schedule.Date{schedule.NewDate(2026, 10, 22), schedule.NewDate(2026, 10, 23), schedule.NewDate(2026, 10, 26), schedule.NewDate(2026, 10, 27), schedule.NewDate(2026, 10, 28)}
	if !slices.Equal(days, want) {
		t.Errorf("slot days = %v, want %v", days, want)
	}
	for _, o := range res.Options {
		start := o.Slot.Start.In(schedule.Stockholm())
		_, offset := start.Zone()
		wantOffset := 2 * 3600
		if !start.Before(local(2026, 10, 25, 12, 0)) {
			wantOffset = 3600
		}
		if offset != wantOffset {
			t.Errorf("slot %s has offset %d, want %d", start, offset, wantOffset)
		}
	}
	if o := res.Options[0]; !o.Slot.Start.Equal(time.Date(2026, 10, 22, 6, 0, 0, 0, time.UTC)) {
		t.Errorf("first slot %s, want 08:00 CEST", o.Slot.Start)
	}
}

func TestSearchSkipsPublicHolidaysAndEves(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		now       time.Time
		preferred string
	}{
		{"julafton (an eve, Thursday)", local(2026, 12, 21, 9, 0), "2026-12-24"},
		{"nyårsafton (an eve, Thursday)", local(2026, 12, 28, 9, 0), "31 december"},
		{"midsommarafton (an eve, Friday)", local(2026, 6, 15, 9, 0), "2026-06-19"},
		{"första maj (a public holiday, Friday)", local(2026, 4, 27, 9, 0), "1 maj"},
		{"Kristi himmelsfärdsdag (a public holiday, Thursday)", local(2026, 5, 11, 9, 0), "2026-05-14"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := sqliteFixture(t, oneProvider, tc.now)
			res := f.run(t, query("vvs", "install_faucet", "11345", tc.preferred))
			if !res.Window.Understood {
				t.Fatalf("the window %q was not understood", tc.preferred)
			}
			if len(res.Options) != 0 || res.FallbackReason != booking.ReasonNoFreeSlot {
				t.Errorf("%d options (reason %q), want none on a day off", len(res.Options), res.FallbackReason)
			}
			// The working day before has slots.
			day := schedule.DateOf(res.Window.Start).AddDays(-1)
			res = f.run(t, query("vvs", "install_faucet", "11345", day.String()))
			if len(res.Options) == 0 {
				t.Errorf("no options on %s, the working day before", day)
			}
		})
	}
}

const withBlocked = `version: 1
providers:
  - id: prv_one
    name: Ett Företag AB
    email: bokning@ett-foretag.example
    min_notice_minutes: 0
    postcodes: ["111-118"]
    hours: {weekdays: ["08:00-17:00"]}
    services: [{service_id: vvs_install_faucet_standard, price_sek: 1890}]
    blocked:
      - {start: 2026-11-24, end: 2026-11-24, note: Kurs}
      - {start: "2026-11-26T08:00", end: "2026-11-26T12:00"}
  - id: prv_two
    name: Två Företag AB
    email: bokning@tva-foretag.example
    min_notice_minutes: 0
    postcodes: ["113"]
    hours: {weekdays: ["08:00-17:00"]}
    services: [{service_id: vvs_install_faucet_standard, price_sek: 1990}]
`

func TestSearchHonoursBlockedPeriods(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db, withBlocked, local(2026, 11, 23, 18, 0), many) // Monday evening
		res := f.run(t, query("vvs", "install_faucet", "11345", "denna vecka"))
		days := map[string][]schedule.Date{}
		for _, o := range res.Options {
			d := schedule.DateOf(o.Slot.Start)
			if ds := days[o.Provider.ID]; len(ds) == 0 || ds[len(ds)-1] != d {
				days[o.Provider.ID] = append(days[o.Provider.ID], d)
			}
			if o.Provider.ID == "prv_one" && d == schedule.NewDate(2026, 11, 26) && o.Slot.Start.Before(local(2026, 11, 26, 12, 0)) {
				t.Errorf("prv_one has a slot at %s inside its blocked morning", o.Slot.Start)
			}
		}
		if want := []schedule.Date{schedule.NewDate(2026, 11, 25), schedule.NewDate(2026, 11, 26), schedule.NewDate(2026, 11, 27)}; !slices.Equal(days["prv_one"], want) {
			t.Errorf("prv_one slot days = %v, want %v (blocked on the 24th)", days["prv_one"], want)
		}
		if want := []schedule.Date{schedule.NewDate(2026, 11, 24), schedule.NewDate(2026, 11, 25), schedule.NewDate(2026, 11, 26), schedule.NewDate(2026, 11, 27)}; !slices.Equal(days["prv_two"], want) {
			t.Errorf("prv_two slot days = %v, want %v", days["prv_two"], want)
		}
	})
}

func TestSearchFallsBackOutsideCoverage(t *testing.T) {
	t.Parallel()
	f := sqliteFixture(t, demoFile(), local(2026, 11, 23, 9, 0))
	for _, pc := range []string{"981 20", "17165", "41900"} {
		res := f.run(t, query("vvs", "install_faucet", pc, "nästa vecka"))
		if len(res.Options) != 0 || res.FallbackReason != booking.ReasonNoCoverage || !strings.Contains(res.SafeNextStep, "POST /v1/requests") {
			t.Errorf("%s: %d options, reason %q", pc, len(res.Options), res.FallbackReason)
		}
	}
}

func TestSearchMovesNeedBothPostcodesCovered(t *testing.T) {
	t.Parallel()
	f := sqliteFixture(t, demoFile(), local(2026, 11, 23, 9, 0))
	details := map[string]any{"home_size_sqm": 58, "boxes": 20, "elevator_origin": true, "elevator_destination": false}
	q := query("moving", "moving_home", "113 45", "nästa vecka")
	q.Details = details
	q.DestinationPostcode = "118 22"
	res := f.run(t, q)
	if len(res.Options) == 0 {
		t.Fatalf("Stockholm to Stockholm: no options (%s)", res.FallbackReason)
	}
	for _, o := range res.Options {
		if o.Claims.Postcode != "11345" || o.Claims.DestinationPostcode != "11822" {
			t.Errorf("claims postcodes %q → %q", o.Claims.Postcode, o.Claims.DestinationPostcode)
		}
	}
	q.DestinationPostcode = "411 05" // Göteborg: nobody covers both ends
	if res := f.run(t, q); len(res.Options) != 0 || res.FallbackReason != booking.ReasonNoCoverage {
		t.Errorf("Stockholm to Göteborg: %d options, reason %q", len(res.Options), res.FallbackReason)
	}
	q.DestinationPostcode = "121 30" // only prv_sthlm_flytt_2 covers 120–129
	res = f.run(t, q)
	if len(res.Options) == 0 {
		t.Fatal("Stockholm to 121 30: no options")
	}
	for _, o := range res.Options {
		if o.Provider.ID != "prv_sthlm_flytt_2" {
			t.Errorf("option of %s, which does not cover 121 30", o.Provider.ID)
		}
	}
}

func TestSearchReadsEachTimingFamily(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 23, 9, 0) // Monday, week 48
	f := sqliteFixture(t, demoFile(), now)
	tests := []struct {
		name, preferred, urgency, locale string
		label                            string
		from, to                         time.Time
		daily                            schedule.ClockRange
	}{
		{"a day", "i morgon", "", "sv", "I morgon, tisdag 24 november 2026", local(2026, 11, 24, 0, 0), local(2026, 11, 25, 0, 0), schedule.ClockRange{}},
		{"a weekday and part of day", "Torsdag förmiddag", "", "sv", "Torsdag 26 november 2026, förmiddag (08:00–12:00)",
			local(2026, 11, 26, 8, 0), local(2026, 11, 26, 12, 0), schedule.ClockRange{Start: 480, End: 720}},
		{"a date", "3 december", "", "en", "Thursday 3 December 2026", local(2026, 12, 3, 0, 0), local(2026, 12, 4, 0, 0), schedule.ClockRange{}},
		{"a week", "next week", "", "en", "Next week (week 49), Monday 30 November – Sunday 6 December 2026",
			local(2026, 11, 30, 0, 0), local(2026, 12, 7, 0, 0), schedule.ClockRange{}},
		{"how soon", "", "så snart som möjligt", "sv", "", now, now.AddDate(0, 0, 3), schedule.ClockRange{}},
		{"time of day over days", "efter 15", "inom en vecka", "sv", "", local(2026, 11, 23, 15, 0), local(2026, 11, 30, 0, 0), schedule.ClockRange{Start: 900, End: 1440}},
		{"unreadable", "när det passar stjärnorna", "", "sv", "Inom de närmaste 14 dagarna (tidsönskemålet kunde inte tolkas)",
			now, now.AddDate(0, 0, 14), schedule.ClockRange{}},
		// The demo providers do not work weekends: the window is read, and there is no option in it.
		{"a weekend", "i helgen", "", "sv", "Helgen, lördag 28 november – söndag 29 november 2026",
			local(2026, 11, 28, 0, 0), local(2026, 11, 30, 0, 0), schedule.ClockRange{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := query("vvs", "install_faucet", "113 45", tc.preferred)
			q.Urgency, q.Locale = tc.urgency, tc.locale
			res := f.run(t, q)
			w := res.Window
			if tc.label != "" && w.Label != tc.label {
				t.Errorf("label = %q, want %q", w.Label, tc.label)
			}
			if w.Label == "" {
				t.Error("empty label")
			}
			if !w.Start.Equal(tc.from) || !w.End.Equal(tc.to) || w.Daily != tc.daily {
				t.Errorf("window %s – %s daily %v, want %s – %s daily %v", w.Start, w.End, w.Daily, tc.from, tc.to, tc.daily)
			}
			if tc.name == "a weekend" {
				if len(res.Options) != 0 || res.FallbackReason != booking.ReasonNoFreeSlot {
					t.Errorf("%d options on a weekend (reason %q)", len(res.Options), res.FallbackReason)
				}
				return
			}
			if len(res.Options) == 0 {
				t.Fatalf("no options (%s)", res.FallbackReason)
			}
			for _, o := range res.Options {
				if o.Slot.Start.Before(w.Start) || o.Slot.End.After(w.End) {
					t.Errorf("slot %s–%s is outside the window", o.Slot.Start, o.Slot.End)
				}
				if !w.Daily.IsZero() {
					s := o.Slot.Start.In(schedule.Stockholm())
					if m := s.Hour()*60 + s.Minute(); m < w.Daily.Start {
						t.Errorf("slot at %s is before the daily range %v", s, w.Daily)
					}
				}
				if o.Slot.Start.Before(now.Add(2 * time.Hour)) {
					t.Errorf("slot at %s is sooner than the demo providers' two hours' notice", o.Slot.Start)
				}
			}
		})
	}
}

func TestSearchRanksEarliestFirstWithBoundsAndDeterminism(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 23, 9, 0)
	f := sqliteFixture(t, demoFile(), now)
	q := query("cleaning", "cleaning_window", "11345", "flexibel")
	a, b := f.run(t, q), f.run(t, q)
	if len(a.Options) != 6 {
		t.Errorf("%d options, want 6 (two Stockholm providers, three each)", len(a.Options))
	}
	perProvider := map[string]int{}
	for i, o := range a.Options {
		perProvider[o.Provider.ID]++
		if i > 0 && o.Slot.Start.Before(a.Options[i-1].Slot.Start) {
			t.Errorf("option %d starts before option %d", i, i-1)
		}
		ob := b.Options[i]
		ob.ID, ob.Claims.Nonce = o.ID, o.Claims.Nonce
		if (o.TaxReduction == nil) != (ob.TaxReduction == nil) || o.TaxReduction != nil && *o.TaxReduction != *ob.TaxReduction {
			t.Errorf("option %d's tax estimate differs between two searches: %+v, %+v", i, o.TaxReduction, ob.TaxReduction)
		}
		ob.TaxReduction = o.TaxReduction
		if fmt.Sprintf("%+v", ob) != fmt.Sprintf("%+v", o) {
			t.Errorf("option %d differs between two searches on the same clock:\n%+v\n%+v", i, o, ob)
		}
	}
	for p, n := range perProvider {
		if n > booking.DefaultMaxPerProvider {
			t.Errorf("%s has %d options, want at most %d", p, n, booking.DefaultMaxPerProvider)
		}
	}
	// A tighter bound caps the total.
	g := newFixture(t, f.db, "", now, func(c *booking.Config) { c.MaxOptions = 4 })
	if n := len(g.run(t, q).Options); n != 4 {
		t.Errorf("%d options with MaxOptions 4", n)
	}
}

func TestSearchReadsBookingsFromTheCalendar(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		now := local(2026, 11, 23, 6, 0)
		f := newFixture(t, db, oneProvider, now)
		q := query("vvs", "install_faucet", "11345", "i dag")
		first := f.run(t, q).Options[0]
		if !first.Slot.Start.Equal(local(2026, 11, 23, 8, 0)) {
			t.Fatalf("first slot %s, want 08:00", first.Slot.Start)
		}
		insertBooking(t, db, "prv_one", "bk_1", local(2026, 11, 23, 8, 0), local(2026, 11, 23, 9, 30))
		got := f.run(t, q).Options
		if !got[0].Slot.Start.Equal(local(2026, 11, 23, 10, 0)) {
			t.Errorf("first slot after a booking 08:00–09:30 is %s, want 10:00", got[0].Slot.Start)
		}
	})
}

func insertBooking(tb testing.TB, db *sqlstore.DB, provider, bookingID string, start, end time.Time) {
	tb.Helper()
	sqlstoretest.InsertBookingEntry(tb, db, provider, bookingID, start, end)
}

func TestDemoSupplyGivesOptionsForEverySeededJobTypeInEachCity(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 23, 9, 0)
	f := sqliteFixture(t, demoFile(), now)
	cat := testCatalog(t)
	cities := []struct {
		name, postcode, destination string
		minProviders                int
	}{
		{"Stockholm", "113 45", "118 20", 2},
		{"Göteborg", "413 01", "416 55", 1},
		{"Malmö", "211 22", "217 45", 1},
	}
	for _, v := range cat.Verticals {
		for _, jt := range v.JobTypes {
			for _, city := range cities {
				t.Run(jt.ID+"/"+city.name, func(t *testing.T) {
					t.Parallel()
					q := query(v.ID, jt.ID, city.postcode, "")
					q.Urgency = "inom två veckor"
					if v.ID == "moving" && slices.Contains([]string{"moving_home", "moving_office", "moving_piano"}, jt.ID) {
						q.DestinationPostcode = city.destination
					}
					if jt.ID == "moving_home" {
						q.Details = map[string]any{"home_size_sqm": 58, "boxes": 20, "elevator_origin": true, "elevator_destination": false}
					}
					res := f.run(t, q)
					if jt.Seed == nil {
						if len(res.Options) != 0 || res.FallbackReason != booking.ReasonNotDirectlyBookable {
							t.Errorf("no seed: %d options, reason %q", len(res.Options), res.FallbackReason)
						}
						return
					}
					providers := map[string]bool{}
					for _, o := range res.Options {
						providers[o.Provider.ID] = true
						if o.Service.ID != jt.Seed.ServiceID || o.Claims.JobTypeID != jt.ID || o.Price.AmountSEK <= 0 {
							t.Errorf("option %+v", o)
						}
					}
					if len(providers) < city.minProviders {
						t.Errorf("%d providers with options, want at least %d (reason %q)", len(providers), city.minProviders, res.FallbackReason)
					}
				})
			}
		}
	}
}

func TestSearchChecksVerticalAndJobType(t *testing.T) {
	t.Parallel()
	f := sqliteFixture(t, "", local(2026, 11, 23, 9, 0))
	_, err := f.search.Search(context.Background(), query("painting", "paint_walls", "11345", "i morgon"))
	e := wantCode(t, err, bokat.CodeUnsupportedVertical)
	if !slices.Equal(e.Extra["supported_vertical_ids"].([]string), []string{"vvs", "electrician", "moving", "cleaning"}) ||
		!strings.Contains(e.SafeNextStep, "Painting cannot be booked") {
		t.Errorf("painting: %+v", e)
	}
	_, err = f.search.Search(context.Background(), query("vvs", "install_sauna", "11345", "i morgon"))
	e = wantCode(t, err, bokat.CodeUnsupportedJobType)
	if ids := e.Extra["accepted_job_type_ids"].([]string); len(ids) != 17 || ids[0] != "leak_visible" {
		t.Errorf("accepted_job_type_ids = %v", ids)
	}
}

func TestSearchWithoutSigningKeysAnswers503(t *testing.T) {
	t.Parallel()
	f := sqliteFixture(t, oneProvider, local(2026, 11, 23, 9, 0), func(c *booking.Config) { c.Keys = nil })
	_, err := f.search.Search(context.Background(), query("vvs", "install_faucet", "11345", "i morgon"))
	wantCode(t, err, bokat.CodeOptionSigningNotConfigured)
}

func TestSearchSeesImportedSupplyChangesAtOnce(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) { testSearchSeesImportedSupplyChanges(t, db) })
}

func testSearchSeesImportedSupplyChanges(t *testing.T, db *sqlstore.DB) {
	now := local(2026, 11, 23, 9, 0)
	f := newFixture(t, db, oneProvider, now)
	q := query("vvs", "install_faucet", "11345", "i morgon")
	if o := f.run(t, q).Options; len(o) == 0 || o[0].Price.AmountSEK != 1890 {
		t.Fatalf("before: %+v", o)
	}
	changed := strings.Replace(oneProvider, "price_sek: 1890", "price_sek: 2090", 1)
	if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](f.db), testCatalog(t), "x.yaml", []byte(changed), now); err != nil {
		t.Fatal(err)
	}
	if o := f.run(t, q).Options; len(o) == 0 || o[0].Price.AmountSEK != 2090 {
		t.Errorf("after a price change the search still shows %+v", o)
	}
	inactive := strings.Replace(changed, "    name: Ett Företag AB\n", "    name: Ett Företag AB\n    active: false\n", 1)
	if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](f.db), testCatalog(t), "x.yaml", []byte(inactive), now); err != nil {
		t.Fatal(err)
	}
	if res := f.run(t, q); len(res.Options) != 0 || res.FallbackReason != booking.ReasonNoCoverage {
		t.Errorf("an inactive provider still has options: %+v", res.Options)
	}
	// Back again, now with a blocked day: the calendar is read on every search.
	blocked := changed + "    blocked: [{start: 2026-11-24, end: 2026-11-24}]\n"
	if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](f.db), testCatalog(t), "x.yaml", []byte(blocked), now); err != nil {
		t.Fatal(err)
	}
	if res := f.run(t, q); len(res.Options) != 0 || res.FallbackReason != booking.ReasonNoFreeSlot {
		t.Errorf("options on a blocked day: %+v (%s)", res.Options, res.FallbackReason)
	}
	if res := f.run(t, query("vvs", "install_faucet", "11345", "onsdag")); len(res.Options) == 0 || res.Options[0].Price.AmountSEK != 2090 {
		t.Errorf("the provider is not back on Wednesday: %+v", res.Options)
	}
}

func TestConcurrentSearchesDuringImports(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 23, 9, 0)
	f := sqliteFixture(t, oneProvider, now)
	changed := strings.Replace(oneProvider, "price_sek: 1890", "price_sek: 2090", 1)
	q := query("vvs", "install_faucet", "11345", "i morgon")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				res, err := f.search.Search(context.Background(), q)
				if err != nil {
					errs <- err
					return
				}
				for _, o := range res.Options {
					if a := o.Price.AmountSEK; a != 1890 && a != 2090 {
						errs <- fmt.Errorf("price %d is neither the old nor the new one", a)
					}
				}
			}
		}()
	}
	for i := 0; i < 4; i++ {
		file := changed
		if i%2 == 1 {
			file = oneProvider
		}
		if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](f.db), testCatalog(t), "x.yaml", []byte(file), now); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if o := f.run(t, q).Options; len(o) == 0 || o[0].Price.AmountSEK != 1890 {
		t.Errorf("after the last import: %+v", o)
	}
}

// A supply past Config.WaitReloadProviders is reloaded beside the index in
// use: the search that finds it changed answers at once from the index it
// holds, and the reload replaces that index.
func TestSearchAnswersFromTheHeldIndexWhileALargeSupplyReloads(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		now := local(2026, 11, 23, 9, 0)
		f := newFixture(t, db, oneProvider, now, func(c *booking.Config) { c.WaitReloadProviders = -1 })
		q := query("vvs", "install_faucet", "11345", "i morgon")
		if o := f.run(t, q).Options; len(o) == 0 || o[0].Price.AmountSEK != 1890 {
			t.Fatalf("before: %+v", o)
		}
		changed := strings.Replace(oneProvider, "price_sek: 1890", "price_sek: 2090", 1)
		if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](f.db), testCatalog(t), "x.yaml", []byte(changed), now); err != nil {
			t.Fatal(err)
		}
		if o := f.run(t, q).Options; len(o) == 0 || o[0].Price.AmountSEK != 1890 {
			t.Errorf("the search that found the supply changed: %+v, want the held price 1890", o)
		}
		booking.SettleReloads(f.search)
		if o := f.run(t, q).Options; len(o) == 0 || o[0].Price.AmountSEK != 2090 {
			t.Errorf("after the reload: %+v, want 2090", o)
		}
	})
}

// failingStore fails the availability reads that read the supply while
// fail is set.
type failingStore struct {
	*sqlstore.DB
	fail atomic.Bool
}

func (s *failingStore) ReadAvailability(ctx context.Context, supplyRev, calendarRev int64, full bool, endAfter time.Time,
	supply func([]bokat.ProviderSupply) error) (booking.Availability, error) {
	return s.DB.ReadAvailability(ctx, supplyRev, calendarRev, full, endAfter, func(run []bokat.ProviderSupply) error {
		if s.fail.Load() {
			return errors.New("the read broke")
		}
		return supply(run)
	})
}

// A reload beside the index in use says when it starts and how it ended,
// in the log and to Config.Reloaded: the providers it holds and how long
// it took, or why it failed (the index in use stays, and the next search
// that finds the supply moved tries again).
func TestAReloadBesideTheIndexIsLoggedAndReported(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		now := local(2026, 11, 23, 9, 0)
		var (
			logs    logtest.Buffer
			mu      sync.Mutex
			results []error
		)
		store := &failingStore{DB: db}
		f := newFixture(t, db, oneProvider, now, func(c *booking.Config) {
			c.Store, c.WaitReloadProviders = store, -1
			c.Log = slog.New(slog.NewJSONHandler(&logs, nil))
			c.Reloaded = func(took time.Duration, err error) {
				mu.Lock()
				defer mu.Unlock()
				results = append(results, err)
			}
		})
		q := query("vvs", "install_faucet", "11345", "i morgon")
		f.run(t, q)
		changed := strings.Replace(oneProvider, "price_sek: 1890", "price_sek: 2090", 1)
		if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](f.db), testCatalog(t), "x.yaml", []byte(changed), now); err != nil {
			t.Fatal(err)
		}
		store.fail.Store(true)
		f.run(t, q)
		booking.SettleReloads(f.search)
		if o := f.run(t, q).Options; len(o) == 0 || o[0].Price.AmountSEK != 1890 {
			t.Errorf("after a failed reload: %+v, want the held price 1890", o)
		}
		booking.SettleReloads(f.search) // the search above tried again, and failed again
		store.fail.Store(false)
		f.run(t, q)
		booking.SettleReloads(f.search)
		if o := f.run(t, q).Options; len(o) == 0 || o[0].Price.AmountSEK != 2090 {
			t.Errorf("after the reload: %+v, want 2090", o)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(results) != 3 || results[0] == nil || results[1] == nil || results[2] != nil {
			t.Errorf("reported %v, want two failures and then success", results)
		}
		out := logs.String()
		for _, want := range []string{`"msg":"search index reloading beside the index in use"`,
			`"msg":"search index reload failed; searches keep the index in use, the next one to find the supply moved tries again"`,
			`the read broke`, `"msg":"search index reloaded"`, `"providers":1,`, `"duration_ms":`} {
			if !strings.Contains(out, want) {
				t.Errorf("the log lacks %s:\n%s", want, out)
			}
		}
		if n := strings.Count(out, "search index reloading beside"); n != 3 {
			t.Errorf("%d reloads logged as started, want 3", n)
		}
	})
}
