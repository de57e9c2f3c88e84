package supply_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

func TestGenerateIsDeterministicAndValid(t *testing.T) {
	t.Parallel()
	from := schedule.NewDate(2026, 12, 14) // includes julafton and juldagen
	a := generated(t, 30, 7)
	if b := generated(t, 30, 7); !bytes.Equal(a, b) {
		t.Fatal("the same seed gave different files")
	}
	if c := generated(t, 30, 8); bytes.Equal(a, c) {
		t.Fatal("another seed gave the same file")
	}
	var buf bytes.Buffer
	o := supply.GenerateOptions{Providers: 25, Seed: 3, From: from, Days: 14, BusyHours: 40,
		Postcodes: []string{"411-418", "113 45"}, Services: []string{"vvs_install_faucet_standard", "cleaning_window_per_window"}}
	if err := supply.Generate(&buf, cat(t), o); err != nil {
		t.Fatal(err)
	}
	ps, err := supply.Parse("gen.yaml", buf.Bytes(), cat(t))
	if err != nil {
		t.Fatalf("generated file does not parse: %v", err)
	}
	if len(ps) != 25 {
		t.Fatalf("got %d providers, want 25", len(ps))
	}
	ids := map[string]bool{}
	for _, p := range ps {
		ids[p.ID] = true
		if !slices.Equal(p.Postcodes, []bokat.PostcodeRange{{From: 41100, To: 41899}, {From: 11345, To: 11345}}) {
			t.Errorf("%s postcodes = %v", p.ID, p.Postcodes)
		}
		if len(p.Services) != 2 || p.Services[0].PriceSEK < 1 || p.Services[1].UnitPriceSEK < 1 {
			t.Errorf("%s services = %+v", p.ID, p.Services)
		}
		if len(p.Blocked) != 40 {
			t.Fatalf("%s has %d blocked periods, want 40", p.ID, len(p.Blocked))
		}
		seen := map[string]bool{}
		for _, b := range p.Blocked {
			day := schedule.DateOf(b.Start)
			off, _ := schedule.IsNonWorkingDay(day)
			if b.End.Sub(b.Start) != time.Hour || off || day.Before(from) || !day.Before(from.AddDays(14)) || seen[b.ID] {
				t.Errorf("%s: blocked %v–%v is not a distinct working hour of the period", p.ID, b.Start, b.End)
			}
			seen[b.ID] = true
			if !inHours(p.Hours, b.Start.In(schedule.Stockholm())) {
				t.Errorf("%s: blocked %v lies outside its hours %v", p.ID, b.Start, p.Hours)
			}
		}
	}
	if len(ids) != 25 {
		t.Errorf("ids are not distinct: %d", len(ids))
	}
	o.BusyHours = 200 // more than 9 hours × 9 working days
	if err := supply.Generate(&bytes.Buffer{}, cat(t), o); err == nil || !strings.Contains(err.Error(), "fewer than 200 busy hours") {
		t.Errorf("too many busy hours: err = %v", err)
	}
	o.BusyHours, o.Services = 1, []string{"no_such_service"}
	if err := supply.Generate(&bytes.Buffer{}, cat(t), o); err == nil {
		t.Error("an unknown service was accepted")
	}
}

func inHours(hours []bokat.WorkingRange, t time.Time) bool {
	m := t.Hour()*60 + t.Minute()
	for _, h := range hours {
		if h.Weekday == t.Weekday() && h.StartMinute <= m && m+60 <= h.EndMinute {
			return true
		}
	}
	return false
}

// providerBlocks splits a generated file into its header and one text per
// provider.
func providerBlocks(file []byte) (string, []string) {
	parts := strings.Split(string(file), "\n  - id: ")
	blocks := make([]string, len(parts)-1)
	for i, p := range parts[1:] {
		blocks[i] = "\n  - id: " + p
	}
	return parts[0], blocks
}

// TestImportAtScaleWritesOnlyWhatDiffers imports more providers than one
// read batch and more rows than one write statement, then changes a few
// providers in different ways: only those are updated, and the store
// matches the file. Each file is parsed once and its providers imported on
// every engine (Import is Parse then ImportParsed); the other import tests
// cover Import on its bytes.
func TestImportAtScaleWritesOnlyWhatDiffers(t *testing.T) {
	t.Parallel()
	const n = 620
	file := generated(t, n, 11)
	original, err := supply.Parse("gen.yaml", file, cat(t))
	if err != nil {
		t.Fatal(err)
	}
	changed := changedAtScale(t, file)
	parsed, err := supply.Parse("gen.yaml", changed, cat(t))
	if err != nil {
		t.Fatal(err)
	}
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
		res, err := supply.ImportParsed(ctx, sqlstore.Bind[supply.Tx](db), "gen.yaml", original, now)
		if err != nil || len(res.Created) != n {
			t.Fatalf("first import: %v, %s", err, res)
		}
		rev1, err := db.SupplyRevision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err = supply.ImportParsed(ctx, sqlstore.Bind[supply.Tx](db), "gen.yaml", original, now.Add(time.Hour))
		if err != nil || len(res.Unchanged) != n {
			t.Fatalf("same file again: %v, %s", err, res)
		}
		if rev, _ := db.SupplyRevision(ctx); rev != rev1 {
			t.Fatalf("an unchanged import moved the revision %d -> %d", rev1, rev)
		}

		res, err = supply.ImportParsed(ctx, sqlstore.Bind[supply.Tx](db), "gen.yaml", parsed, now.Add(2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		wantUpdated := []string{"prv_gen_00001", "prv_gen_00004", "prv_gen_00011", "prv_gen_00556", "prv_gen_00601", "prv_gen_00620"}
		if !slices.Equal(res.Updated, wantUpdated) || len(res.Unchanged) != n-len(wantUpdated) || len(res.Created) != 0 {
			t.Fatalf("changed import = updated %v, %d unchanged, %d created", res.Updated, len(res.Unchanged), len(res.Created))
		}
		if rev, _ := db.SupplyRevision(ctx); rev <= rev1 {
			t.Fatalf("a changing import left the revision at %d", rev)
		}
		_, stored := dump(t, db)
		if len(stored) != n {
			t.Fatalf("store holds %d providers, want %d", len(stored), n)
		}
		for k := range parsed {
			if got, want := stored[k], sqlstore.NormalizeSupply(parsed[k]); !supplyEqual(got, want) {
				t.Fatalf("stored %s differs from the file:\n got %+v\nwant %+v", want.ID, got, want)
			}
		}
		if len(stored[600].Blocked) != 39 || stored[619].Blocked[0].Note != "Kurs" {
			t.Errorf("blocked periods: %d for 601, note %q for 620", len(stored[600].Blocked), stored[619].Blocked[0].Note)
		}
	})
}

// changedAtScale is the generated file with six providers changed in
// different ways: name, a price, coverage, hours, one blocked period fewer
// and a blocked period's note.
func changedAtScale(tb testing.TB, file []byte) []byte {
	tb.Helper()
	head, blocks := providerBlocks(file)
	edit := func(i int, old, new string) {
		tb.Helper()
		if !strings.Contains(blocks[i], old) {
			tb.Fatalf("provider %d has no %q", i, old)
		}
		blocks[i] = strings.Replace(blocks[i], old, new, 1)
	}
	edit(0, "name: Testfirma 00001 AB", "name: Nytt Namn AB")                   // provider row
	edit(3, "price_sek: ", "price_sek: 9")                                      // a price
	edit(10, `postcodes: ["111-118"]`, `postcodes: ["111-118", "120"]`)         // coverage
	edit(555, "weekdays: [", `saturday: ["10:00-11:00"]`+"\n      weekdays: [") // hours
	i := strings.Index(blocks[600], "      - {start:")                          // drop a blocked period
	j := i + strings.Index(blocks[600][i:], "\n") + 1
	blocks[600] = blocks[600][:i] + blocks[600][j:]
	edit(619, `end: "`, `note: "Kurs", end: "`) // a blocked period's note
	return []byte(head + strings.Join(blocks, ""))
}

func TestPutSupplyRefusesAProviderGivenTwice(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		ps, err := supply.Parse("x.yaml", []byte(validFile), cat(t))
		if err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.PutSupply(ctx, append(ps, ps[0]), time.Now())
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "prv_a is given twice") {
			t.Fatalf("err = %v", err)
		}
		if s, err := db.LoadSupply(ctx); err != nil || len(s.Providers) != 0 {
			t.Fatalf("store after the refused put: %d providers, %v", len(s.Providers), err)
		}
	})
}

// TestAliasesAreDecodedOnceAndBounded: providers sharing anchored lists get
// the same supply as written out; a file whose aliases would repeat more
// than MaxAliasExpansion nodes is refused at once, before decoding.
func TestAliasesAreDecodedOnceAndBounded(t *testing.T) {
	t.Parallel()
	var pcs []string
	for i := range 300 {
		pcs = append(pcs, fmt.Sprintf("%q", fmt.Sprint(11000+i*10)))
	}
	list := "[" + strings.Join(pcs, ", ") + "]"
	got, err := supply.Parse("aliases.yaml", aliasedProviders(200, list, true), cat(t))
	if err != nil {
		t.Fatal(err)
	}
	want, err := supply.Parse("expanded.yaml", aliasedProviders(200, list, false), cat(t))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, supplyEqual) {
		t.Fatal("aliased providers differ from the written-out ones")
	}

	// 2,000 aliases of a 3,000-postcode list repeat 6 million nodes.
	bomb := aliasedProviders(2000, "["+strings.Repeat(`"113 45", `, 2999)+`"113 46"]`, true)
	_, err = supply.Parse("bomb.yaml", bomb, cat(t))
	var perr *supply.Errors
	if !errors.As(err, &perr) || len(perr.Problems) != 1 || !strings.Contains(err.Error(), "aliases repeat more than 5000000 YAML nodes") {
		t.Fatalf("alias bomb: err = %v", err)
	}
	// Nested aliases (billion laughs) saturate without expanding.
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'k'; i++ {
		laughs += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	if _, err := supply.Parse("laughs.yaml", []byte(laughs), cat(t)); err == nil || !strings.Contains(err.Error(), "aliases repeat more than") {
		t.Fatalf("billion laughs: err = %v", err)
	}
}

// aliasedProviders is a supply file of n providers with the same postcodes
// (list), hours and services: the first anchors them and the others refer
// to the anchors when aliased, or else each writes them out.
func aliasedProviders(n int, list string, aliased bool) []byte {
	var b strings.Builder
	provider := func(i int, postcodes, hours, services string) {
		fmt.Fprintf(&b, "  - id: p%d\n    name: P%d AB\n    email: p%d@firma.example\n    postcodes: %s\n    hours: %s\n    services: %s\n",
			i, i, i, postcodes, hours, services)
	}
	const hours, services = `{weekdays: ["08:00-17:00"], saturday: ["09:00-12:00"]}`,
		`[{service_id: vvs_install_faucet_standard, price_sek: 1890}, {service_id: cleaning_window_per_window, unit_price_sek: 79}]`
	b.WriteString("version: 1\nproviders:\n")
	if !aliased {
		for i := range n {
			provider(i, list, hours, services)
		}
		return []byte(b.String())
	}
	provider(0, "&pc "+list, "&h "+hours, "&s "+services)
	for i := 1; i < n; i++ {
		provider(i, "*pc", "*h", "*s")
	}
	return []byte(b.String())
}
