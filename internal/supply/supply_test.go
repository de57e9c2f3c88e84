package supply_test

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

func cat(tb testing.TB) *catalog.Catalog {
	tb.Helper()
	c, err := catalog.Load()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

const validFile = `version: 1
providers:
  - id: prv_a
    name: Alfa Rör AB
    city: Stockholm
    rating_label: 4,8 av 5
    email: bokning@alfa-ror.example
    phone: +46 8 465 004 05
    postcodes: ["111-118", "120", "131 45"]
    hours:
      weekdays: ["08:00-12:00", "13:00-17:00"]
      saturday: ["09:00-13:00"]
    services:
      - service_id: vvs_install_faucet_standard
        price_sek: 1890
        labour_percent: 80
      - service_id: electrician_install_spotlights_per_item
        unit_price_sek: 650
        minimum_charge_sek: 1950
        duration: {minutes_per_unit: 40, minimum_minutes: 60}
    blocked:
      - {start: 2026-12-21, end: 2027-01-06, note: Semester}
      - {start: "2026-11-24T08:00", end: "2026-11-24T12:00"}
  - id: prv_b
    name: Beta Städ AB
    email: info@beta-stad.example
    active: false
    min_notice_minutes: 60
    horizon_days: 30
    postcodes: [411]
    hours: {monday: ["07:30-16:00"]}
    services:
      - {service_id: cleaning_window_per_window, unit_price_sek: 79, labour_percent: 100}
      - {service_id: cleaning_textile_carpet_small_job, price_sek: 1390, duration: {fixed_minutes: 90}}
`

func TestParseReadsEveryField(t *testing.T) {
	t.Parallel()
	got, err := supply.Parse("supply.yaml", []byte(validFile), cat(t))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d providers, want 2", len(got))
	}
	a, b := got[0], got[1]
	wantA := bokat.Provider{ID: "prv_a", Name: "Alfa Rör AB", City: "Stockholm", RatingLabel: "4,8 av 5",
		Email: "bokning@alfa-ror.example", Phone: "+46 8 465 004 05", Active: true, Mode: bokat.ModeLive,
		MinNoticeMinutes: supply.DefaultMinNoticeMinutes, HorizonDays: supply.DefaultHorizonDays}
	if a.Provider != wantA {
		t.Errorf("provider a = %+v, want %+v", a.Provider, wantA)
	}
	wantPostcodes := []bokat.PostcodeRange{{From: 11100, To: 11899}, {From: 12000, To: 12099}, {From: 13145, To: 13145}}
	if !slices.Equal(a.Postcodes, wantPostcodes) {
		t.Errorf("postcodes = %v, want %v", a.Postcodes, wantPostcodes)
	}
	if len(a.Hours) != 11 || a.Hours[0] != (bokat.WorkingRange{Weekday: time.Monday, StartMinute: 480, EndMinute: 720}) ||
		a.Hours[10] != (bokat.WorkingRange{Weekday: time.Saturday, StartMinute: 540, EndMinute: 780}) {
		t.Errorf("hours = %v", a.Hours)
	}
	wantServices := []bokat.ProviderService{
		{ServiceID: "vvs_install_faucet_standard", PriceSEK: 1890, Labour: bokat.StatedLabour(80)},
		{ServiceID: "electrician_install_spotlights_per_item", UnitPriceSEK: 650, MinimumChargeSEK: 1950,
			Duration: bokat.DurationOverride{MinutesPerUnit: 40, MinimumMinutes: 60}},
	}
	if !slices.Equal(a.Services, wantServices) {
		t.Errorf("services = %+v, want %+v", a.Services, wantServices)
	}
	stockholm := schedule.Stockholm()
	wantBlocked := []bokat.BlockedPeriod{
		{Start: time.Date(2026, 12, 21, 0, 0, 0, 0, stockholm), End: time.Date(2027, 1, 7, 0, 0, 0, 0, stockholm), Note: "Semester"},
		{Start: time.Date(2026, 11, 24, 8, 0, 0, 0, stockholm), End: time.Date(2026, 11, 24, 12, 0, 0, 0, stockholm)},
	}
	if len(a.Blocked) != 2 {
		t.Fatalf("blocked = %v", a.Blocked)
	}
	for i, w := range wantBlocked {
		g := a.Blocked[i]
		if !g.Start.Equal(w.Start) || !g.End.Equal(w.End) || g.Note != w.Note || g.ID != supply.BlockedPeriodID("prv_a", w.Start, w.End) {
			t.Errorf("blocked[%d] = %+v, want %+v", i, g, w)
		}
	}
	if b.Active || b.Email != "info@beta-stad.example" || b.Phone != "" || b.MinNoticeMinutes != 60 || b.HorizonDays != 30 || !slices.Equal(b.Postcodes, []bokat.PostcodeRange{{From: 41100, To: 41199}}) {
		t.Errorf("provider b = %+v", b)
	}
	if b.Services[0].Labour != bokat.StatedLabour(100) || b.Services[1].Labour.Stated {
		t.Errorf("b labour shares = %+v, %+v; want 100 %% stated, then not stated", b.Services[0].Labour, b.Services[1].Labour)
	}
	if b.Services[1].Duration != (bokat.DurationOverride{FixedMinutes: 90}) {
		t.Errorf("b duration = %+v", b.Services[1].Duration)
	}
}

func TestParseReportsEveryProblemWithItsLocation(t *testing.T) {
	t.Parallel()
	const file = `version: 2
providers:
  - id: Bad Id
    name: ""
    email: Bokning <bokning@firma.example>
    postcodes: ["abc", "118-111"]
    hours:
      weekdays: ["08:00-17:00"]
      monday: ["09:00-10:00"]
      saturday: ["17:00-08:00"]
    services:
      - service_id: vvs_install_faucet_standard
        unit_price_sek: 100
      - service_id: no_such_service
        price_sek: 1
      - service_id: electrician_install_spotlights_per_item
        unit_price_sek: "650"
    blocked:
      - {start: tomorrow, end: 2026-12-01}
    colour: blue
  - id: prv_ok
    name: OK AB
    email: ok@ok.example
    postcodes: ["111"]
    hours: {weekdays: ["08:00-17:00"]}
    services: [{service_id: vvs_install_faucet_standard, price_sek: 100}]
  - id: prv_ok
    name: Twin AB
    email: twin@twin.example
    postcodes: ["111"]
    hours: {weekdays: ["08:00-17:00"]}
    services: [{service_id: vvs_install_faucet_standard, price_sek: 100}]
`
	_, err := supply.Parse("bad.yaml", []byte(file), cat(t))
	var perr *supply.Errors
	if !errors.As(err, &perr) {
		t.Fatalf("Parse error = %v, want *Errors", err)
	}
	want := []string{
		"bad.yaml:1:10: version: must be 1",
		"bad.yaml:3:9: providers[0].id: must be 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter or digit",
		"bad.yaml:4:11: providers[0].name: must be 1 to 160 characters",
		"bad.yaml:5:12: providers[0].email: is not an e-mail address; give one bare address",
		`bad.yaml:6:17: providers[0].postcodes[0]: "abc" is not a postcode`,
		`bad.yaml:6:24: providers[0].postcodes[1]: range "118-111" ends before it starts`,
		`bad.yaml:9:7: providers[0].hours.monday: monday is also given by "weekdays"`,
		`bad.yaml:10:18: providers[0].hours.saturday[0]: "17:00-08:00" must end after it starts`,
		"bad.yaml:12:9: providers[0].services[0].price_sek: is required",
		"bad.yaml:13:9: providers[0].services[0].unit_price_sek: is not used by flat services (vvs_install_faucet_standard); give price_sek",
		`bad.yaml:14:21: providers[0].services[1].service_id: "no_such_service" is not a service of the catalog`,
		"bad.yaml:17:25: providers[0].services[2].unit_price_sek: must be a whole number",
		"bad.yaml:19:17: providers[0].blocked[0].start: must be a date",
		"bad.yaml:20:5: providers[0].colour: unknown field",
		"bad.yaml:27:9: providers[2].id: duplicates the id of providers[1]",
	}
	lines := strings.Split(perr.Error(), "\n")
	for _, w := range want {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w) }) {
			t.Errorf("no problem starting %q in\n%s", w, perr.Error())
		}
	}
	if len(lines) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(lines), len(want), perr.Error())
	}
}

func TestParseRejectsBrokenFiles(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, file, want string }{
		{"empty", "", "x.yaml: the file is empty"},
		{"not yaml", "providers: [\n", "x.yaml:1:1: not valid YAML"},
		{"no providers", "version: 1\nproviders: []\n", "x.yaml:2:12: providers: must list at least one provider"},
		{"providers missing", "version: 1\n", "x.yaml:1:1: providers: is required"},
		{"list at the root", "- 1\n", "x.yaml:1:1: must be a mapping of fields"},
		{"no hours", "version: 1\nproviders:\n  - {id: p, name: P, postcodes: [111], hours: {}, services: [{service_id: vvs_install_faucet_standard, price_sek: 1}]}\n",
			"x.yaml:3:47: providers[0].hours: must give at least one working range"},
		{"duration on flat", "version: 1\nproviders:\n  - {id: p, name: P, postcodes: [111], hours: {weekdays: [\"08:00-17:00\"]}, services: [{service_id: vvs_install_faucet_standard, price_sek: 1, duration: {minutes_per_unit: 5}}]}\n",
			"providers[0].services[0].duration.minutes_per_unit: needs a per-unit service"},
		{"labour above 100 %", "version: 1\nproviders:\n  - {id: p, name: P, email: a@b.example, postcodes: [111], hours: {weekdays: [\"08:00-17:00\"]}, services: [{service_id: vvs_install_faucet_standard, price_sek: 1, labour_percent: 101}]}\n",
			"providers[0].services[0].labour_percent: "},
		{"labour not whole", "version: 1\nproviders:\n  - {id: p, name: P, email: a@b.example, postcodes: [111], hours: {weekdays: [\"08:00-17:00\"]}, services: [{service_id: vvs_install_faucet_standard, price_sek: 1, labour_percent: 62.5}]}\n",
			"providers[0].services[0].labour_percent: "},
		{"one anchor in two roles", "version: 1\nproviders:\n  - {id: p, name: P, email: a@b.example, postcodes: &x [\"111\"], hours: *x, services: *x}\n",
			"x.yaml:3:53: providers[0].hours: must be a mapping of fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := supply.Parse("x.yaml", []byte(tc.file), cat(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// contactFile is a one-provider file whose contact lines are contact.
func contactFile(contact string) string {
	return "version: 1\nproviders:\n  - id: p\n    name: P AB\n" + contact +
		"    postcodes: [111]\n    hours: {weekdays: [\"08:00-17:00\"]}\n" +
		"    services: [{service_id: vvs_install_faucet_standard, price_sek: 1}]\n"
}

func TestParseProviderContactData(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, contact string
		// want is the problem line; empty means the file is valid.
		want             string
		wantEmail, phone string
	}{
		{"bare address", "    email: bokning@firma.example\n", "", "bokning@firma.example", ""},
		{"address and phone", "    email: a.b+c@sub.firma.example\n    phone: \"+46 (0)8-465 004 01\"\n", "", "a.b+c@sub.firma.example", "+46 (0)8-465 004 01"},
		{"phone as a YAML number", "    email: a@b.example\n    phone: 0846500401\n", "", "a@b.example", "0846500401"},
		{"spaces trimmed", "    email: \"  a@b.example \"\n", "", "a@b.example", ""},
		{"missing", "", "x.yaml:3:5: providers[0].email: is required", "", ""},
		{"empty", "    email: \"\"\n", "x.yaml:5:12: providers[0].email: must be 3 to 254 characters", "", ""},
		{"null", "    email:\n", "x.yaml:5:11: providers[0].email: must be text", "", ""},
		{"no at sign", "    email: bokning.firma.example\n", "x.yaml:5:12: providers[0].email: is not an e-mail address", "", ""},
		{"display name", "    email: Firma <a@b.example>\n", "x.yaml:5:12: providers[0].email: is not an e-mail address", "", ""},
		{"angle brackets", "    email: \"<a@b.example>\"\n", "x.yaml:5:12: providers[0].email: is not an e-mail address", "", ""},
		{"comment", "    email: a@b.example (kontor)\n", "x.yaml:5:12: providers[0].email: is not an e-mail address", "", ""},
		{"two addresses", "    email: a@b.example, c@d.example\n", "x.yaml:5:12: providers[0].email: is not an e-mail address", "", ""},
		{"too long", "    email: " + strings.Repeat("a", 250) + "@b.example\n", "x.yaml:5:12: providers[0].email: must be 3 to 254 characters", "", ""},
		{"a list", "    email: [a@b.example]\n", "x.yaml:5:12: providers[0].email: must be text", "", ""},
		{"phone with letters", "    email: a@b.example\n    phone: ring 08-465 004 01\n", "x.yaml:6:12: providers[0].phone: is not a phone number", "", ""},
		{"phone plus inside", "    email: a@b.example\n    phone: 08+46500401\n", "x.yaml:6:12: providers[0].phone: is not a phone number", "", ""},
		{"phone too few digits", "    email: a@b.example\n    phone: 1-2-3-4\n", "x.yaml:6:12: providers[0].phone: is not a phone number", "", ""},
		{"phone too many digits", "    email: a@b.example\n    phone: \"+46 8 465 004 01 123 456\"\n", "x.yaml:6:12: providers[0].phone: is not a phone number", "", ""},
		{"phone too long", "    email: a@b.example\n    phone: \"" + strings.Repeat(" ", 30) + "0846500401" + strings.Repeat("-", 35) + "1\"\n", "x.yaml:6:12: providers[0].phone: must be 5 to 40 characters", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := supply.Parse("x.yaml", []byte(contactFile(tc.contact)), cat(t))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if got[0].Email != tc.wantEmail || got[0].Phone != tc.phone {
					t.Errorf("email %q phone %q, want %q %q", got[0].Email, got[0].Phone, tc.wantEmail, tc.phone)
				}
				return
			}
			var perr *supply.Errors
			if !errors.As(err, &perr) || len(perr.Problems) != 1 || !strings.HasPrefix(perr.Error(), tc.want) {
				t.Errorf("Parse error =\n%v\nwant one problem starting %q", err, tc.want)
			}
		})
	}
}

func TestParsePostcodeRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bokat.PostcodeRange
		err  bool
	}{
		{"113 45", bokat.PostcodeRange{From: 11345, To: 11345}, false},
		{"11345", bokat.PostcodeRange{From: 11345, To: 11345}, false},
		{"111", bokat.PostcodeRange{From: 11100, To: 11199}, false},
		{"11", bokat.PostcodeRange{From: 11000, To: 11999}, false},
		{"111-118", bokat.PostcodeRange{From: 11100, To: 11899}, false},
		{"111 00–118 99", bokat.PostcodeRange{From: 11100, To: 11899}, false},
		{"411 00-411 50", bokat.PostcodeRange{From: 41100, To: 41150}, false},
		{"011", bokat.PostcodeRange{}, true},
		{"123456", bokat.PostcodeRange{}, true},
		{"12a", bokat.PostcodeRange{}, true},
		{"", bokat.PostcodeRange{}, true},
	}
	for _, tc := range tests {
		got, err := supply.ParsePostcodeRange(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParsePostcodeRange(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestDemoSupplyMatchesTheDecisions(t *testing.T) {
	t.Parallel()
	c := cat(t)
	providers, err := supply.Parse(supply.DemoName, supply.Demo(), c)
	if err != nil {
		t.Fatalf("the demo supply does not parse:\n%v", err)
	}
	type city struct {
		name     string
		postcode int
		min      int
	}
	cities := []city{{"Stockholm 111 xx", 11120, 2}, {"Stockholm 118 xx", 11899, 2}, {"Göteborg", 41305, 1}, {"Malmö", 21710, 1}}
	for _, id := range c.ServiceIDs() {
		for _, ct := range cities {
			n := 0
			for _, p := range providers {
				_, offers := p.Service(id)
				if p.Active && offers && p.Covers(ct.postcode) {
					n++
				}
			}
			if n < ct.min {
				t.Errorf("%s: %d providers in %s, want at least %d", id, n, ct.name, ct.min)
			}
		}
	}
	emails := map[string]string{}
	for _, p := range providers {
		if !strings.HasPrefix(p.Email, "bokningar@") || !strings.HasSuffix(p.Email, ".example") {
			t.Errorf("%s: e-mail %q, want bokningar@<name>.example (a reserved domain)", p.ID, p.Email)
		}
		if other, dup := emails[p.Email]; dup {
			t.Errorf("%s and %s share the e-mail %s", other, p.ID, p.Email)
		}
		emails[p.Email] = p.ID
		if p.Phone == "" {
			t.Errorf("%s has no phone", p.ID)
		}
		if p.Covers(98120) {
			t.Errorf("%s covers 981 20; the north has no supply in the demo", p.ID)
		}
		want := []bokat.WorkingRange{}
		for d := time.Monday; d <= time.Friday; d++ {
			want = append(want, bokat.WorkingRange{Weekday: d, StartMinute: 8 * 60, EndMinute: 17 * 60})
		}
		if !slices.Equal(p.Hours, want) || p.HorizonDays != 14 {
			t.Errorf("%s: hours %v, horizon %d; want Mon–Fri 08–17 over 14 days", p.ID, p.Hours, p.HorizonDays)
		}
	}
}

// dump is the whole stored supply, blocked periods included, for comparing
// the store before and after an import.
func dump(t *testing.T, db *sqlstore.DB) (booking.Supply, []bokat.ProviderSupply) {
	t.Helper()
	ctx := context.Background()
	s, err := db.LoadSupply(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var full []bokat.ProviderSupply
	err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
		for _, p := range s.Providers {
			ps, err := tx.ProviderSupply(ctx, p.ID)
			if err != nil {
				return err
			}
			full = append(full, ps)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, full
}

func TestImportIsIdempotentAndReplacesWhatAProviderSays(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
		res, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat(t), "supply.yaml", []byte(validFile), now)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Created, []string{"prv_a", "prv_b"}) || len(res.Updated)+len(res.Unchanged) != 0 {
			t.Fatalf("first import = %+v", res)
		}
		before, full := dump(t, db)
		parsed, _ := supply.Parse("supply.yaml", []byte(validFile), cat(t))
		for i := range parsed {
			if got, want := sqlstore.NormalizeSupply(full[i]), sqlstore.NormalizeSupply(parsed[i]); !supplyEqual(got, want) {
				t.Errorf("stored %s =\n%+v\nwant\n%+v", want.ID, got, want)
			}
		}

		res, err = supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat(t), "supply.yaml", []byte(validFile), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed() || !slices.Equal(res.Unchanged, []string{"prv_a", "prv_b"}) {
			t.Fatalf("second import = %+v, want everything unchanged", res)
		}
		after, fullAfter := dump(t, db)
		if after.Revision != before.Revision || !slices.EqualFunc(full, fullAfter, supplyEqual) {
			t.Fatalf("the second import changed the store: revision %d -> %d", before.Revision, after.Revision)
		}

		// A changed file replaces the provider's lists and leaves bookings alone.
		_, err = db.R().ExecContext(ctx, `SELECT 1`)
		if err != nil {
			t.Fatal(err)
		}
		sqlstoretest.InsertBookingEntry(t, db, "prv_a", "bk_1", now.Add(48*time.Hour), now.Add(50*time.Hour))
		changed := strings.Replace(validFile, "price_sek: 1890", "price_sek: 1990", 1)
		changed = strings.Replace(changed, "        labour_percent: 80\n", "", 1)
		changed = strings.Replace(changed, `      - {start: "2026-11-24T08:00", end: "2026-11-24T12:00"}`+"\n", "", 1)
		changed = strings.Replace(changed, `["111-118", "120", "131 45"]`, `["111-118"]`, 1)
		res, err = supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat(t), "supply.yaml", []byte(changed), now.Add(2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Updated, []string{"prv_a"}) || !slices.Equal(res.Unchanged, []string{"prv_b"}) {
			t.Fatalf("changed import = %+v", res)
		}
		third, full3 := dump(t, db)
		if third.Revision <= after.Revision {
			t.Errorf("revision %d did not grow past %d", third.Revision, after.Revision)
		}
		a := full3[0]
		if s, _ := a.Service("vvs_install_faucet_standard"); s.PriceSEK != 1990 || s.Labour.Stated {
			t.Errorf("price = %d, labour %+v; want 1990 and the labour share no longer stated", s.PriceSEK, s.Labour)
		}
		if len(a.Blocked) != 1 || len(a.Postcodes) != 1 {
			t.Errorf("blocked %v postcodes %v, want one each", a.Blocked, a.Postcodes)
		}
		busy, err := db.BusyEntries(ctx, []string{"prv_a"}, now, now.Add(72*time.Hour))
		if err != nil || len(busy) != 1 || busy[0].BookingID != "bk_1" || busy[0].Kind != bokat.CalendarKindBooking {
			t.Errorf("busy entries = %+v, %v; want the booking kept", busy, err)
		}
	})
}

func TestImportKeepsProviderContactData(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
		step := func(name, file string, wantUpdated []string, wantEmail, wantPhone string) {
			t.Helper()
			before, err := db.SupplyRevision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Minute)
			res, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat(t), "supply.yaml", []byte(file), now)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !slices.Equal(res.Updated, wantUpdated) || len(res.Created) != 0 {
				t.Errorf("%s: import = %+v, want updated %v", name, res, wantUpdated)
			}
			after, err := db.SupplyRevision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if changed := after != before; changed != (len(wantUpdated) > 0) {
				t.Errorf("%s: revision %d -> %d", name, before, after)
			}
			c, err := db.ProviderContact(ctx, "prv_a")
			if err != nil {
				t.Fatal(err)
			}
			want := bokat.ProviderContact{ID: "prv_a", Name: "Alfa Rör AB", Email: wantEmail, Phone: wantPhone, Active: true}
			if c != want {
				t.Errorf("%s: contact = %+v, want %+v", name, c, want)
			}
		}
		if _, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat(t), "supply.yaml", []byte(validFile), now); err != nil {
			t.Fatal(err)
		}
		newPhone := strings.Replace(validFile, "phone: +46 8 465 004 05", "phone: 08-465 004 06", 1)
		step("new phone", newPhone, []string{"prv_a"}, "bokning@alfa-ror.example", "08-465 004 06")
		step("same again", newPhone, nil, "bokning@alfa-ror.example", "08-465 004 06")
		noPhone := strings.Replace(newPhone, "    phone: 08-465 004 06\n", "", 1)
		newMail := strings.Replace(noPhone, "bokning@alfa-ror.example", "order@alfa-ror.example", 1)
		step("phone removed, new address", newMail, []string{"prv_a"}, "order@alfa-ror.example", "")
		step("same again", newMail, nil, "order@alfa-ror.example", "")

		if _, err := db.ProviderContact(ctx, "prv_nobody"); !errors.Is(err, bokat.ErrNotFound) {
			t.Errorf("unknown provider: err = %v, want ErrNotFound", err)
		}
		b, err := db.ProviderContact(ctx, "prv_b")
		if err != nil || b.Active || b.Email != "info@beta-stad.example" || b.Name != "Beta Städ AB" {
			t.Errorf("inactive provider contact = %+v, %v", b, err)
		}
	})
}

func TestImportWritesNothingWhenTheFileHasProblems(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	ctx := context.Background()
	bad := strings.Replace(validFile, "price_sek: 1390", "price_sek: -1", 1)
	_, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat(t), "supply.yaml", []byte(bad), time.Now())
	var perr *supply.Errors
	if !errors.As(err, &perr) || !strings.Contains(err.Error(), "providers[1].services[1].price_sek: must be a whole number from 1 to") {
		t.Fatalf("Import error = %v", err)
	}
	s, err := db.LoadSupply(ctx)
	if err != nil || len(s.Providers) != 0 || s.Revision != 0 {
		t.Fatalf("store after a failed import: %+v, %v; want empty", s, err)
	}
}

func supplyEqual(a, b bokat.ProviderSupply) bool {
	return a.Provider == b.Provider && slices.Equal(a.Postcodes, b.Postcodes) && slices.Equal(a.Services, b.Services) &&
		slices.Equal(a.Hours, b.Hours) && slices.EqualFunc(a.Blocked, b.Blocked, func(x, y bokat.BlockedPeriod) bool {
		return x.ID == y.ID && x.Start.Equal(y.Start) && x.End.Equal(y.End) && x.Note == y.Note
	})
}

func TestParseCalendars(t *testing.T) {
	t.Parallel()
	const head = `version: 1
providers:
  - id: prv_cal
    name: Kalender AB
    email: k@kalender.example
    postcodes: ["111"]
    hours: {weekdays: ["08:00-17:00"]}
    services: [{service_id: vvs_install_faucet_standard, price_sek: 100}]
`
	good := head + `    calendars:
      - url: https://calendar.google.com/calendar/ical/abc%40group.calendar.google.com/private-123/basic.ics
      - {url: "webcal://p42-caldav.icloud.com/published/2/XYZ", rule: all_day_busy}
`
	providers, err := supply.Parse("cal.yaml", []byte(good), cat(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []bokat.CalendarSubscription{
		{URL: "https://calendar.google.com/calendar/ical/abc%40group.calendar.google.com/private-123/basic.ics"},
		{URL: "webcal://p42-caldav.icloud.com/published/2/XYZ", Rule: "all_day_busy"},
	}
	if got := providers[0].Calendars; !slices.Equal(got, want) {
		t.Errorf("calendars = %+v, want %+v", got, want)
	}
	bad := head + `    calendars:
      - url: ftp://calendar.example.se/cal.ics
      - {url: "https://u:p@calendar.example.se/cal.ics"}
      - {url: "https://calendar.example.se/cal.ics", rule: sometimes}
      - {url: "https://calendar.example.se/a.ics"}
      - {url: "https://calendar.example.se/a.ics"}
      - {rule: everything}
`
	_, err = supply.Parse("cal.yaml", []byte(bad), cat(t))
	var perr *supply.Errors
	if !errors.As(err, &perr) {
		t.Fatalf("Parse error = %v, want *Errors", err)
	}
	wantProblems := []string{
		"cal.yaml:10:14: providers[0].calendars[0].url: must be an https:// (or webcal://) address",
		"cal.yaml:11:15: providers[0].calendars[1].url: must not carry user information",
		"cal.yaml:12:60: providers[0].calendars[2].rule: must be busy_only, everything or all_day_busy",
		"cal.yaml:14:15: providers[0].calendars[4].url: repeats the address of calendars[3]",
		"cal.yaml:15:9: providers[0].calendars[5].url: is required",
	}
	lines := strings.Split(perr.Error(), "\n")
	for _, w := range wantProblems {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w) }) {
			t.Errorf("no problem starting %q in\n%s", w, perr.Error())
		}
	}
	if len(lines) != len(wantProblems) {
		t.Errorf("%d problems, want %d:\n%s", len(lines), len(wantProblems), perr.Error())
	}
}

// A blocked period's id leads with its provider's, so one provider's
// periods lie together in the store's index of ids; the rest is the digest
// of provider, start and end, so another provider or time is another id.
func TestBlockedPeriodIDLeadsWithItsProvider(t *testing.T) {
	start := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	end := start.Add(time.Hour)
	id := supply.BlockedPeriodID("prv_a", start, end)
	rest, ok := strings.CutPrefix(id, "blk_prv_a_")
	if _, err := hex.DecodeString(rest); !ok || err != nil || len(rest) != 20 {
		t.Fatalf("id %q: want blk_prv_a_ and 20 hex digits", id)
	}
	if again := supply.BlockedPeriodID("prv_a", start.In(schedule.Stockholm()), end); again != id {
		t.Errorf("the same period in another zone: %q, want %q", again, id)
	}
	for _, other := range []string{
		supply.BlockedPeriodID("prv_b", start, end),
		supply.BlockedPeriodID("prv_a", start, end.Add(time.Minute)),
		supply.BlockedPeriodID("prv_a", start.Add(-time.Minute), end),
	} {
		if other == id {
			t.Errorf("another provider or time gave the same id %q", id)
		}
	}
}
