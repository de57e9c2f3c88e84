package supply_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// sameAsWhole fails unless Parse, reading the file provider by provider
// where it can, answers exactly as reading its whole node tree does: the
// same providers, or the same problems at the same places. It returns
// whether Parse read the file in parts.
func sameAsWhole(t *testing.T, c *catalog.Catalog, data []byte) (inParts bool) {
	t.Helper()
	got, inParts, err := supply.ParseTellingParts("x.yaml", data, c)
	want, wantErr := supply.ParseWhole("x.yaml", data, c)
	if !reflect.DeepEqual(got, want) || errText(err) != errText(wantErr) {
		t.Fatalf("file:\n%s\nin parts: %d providers, %v\nwhole: %d providers, %v", data, len(got), err, len(want), wantErr)
	}
	return inParts
}

// badBlockFile is a block-style file with problems in several providers,
// a duplicated id, and top-level problems before and after the list.
const badBlockFile = `# a file with problems
colour: blue
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
      - service_id: no_such_service
        price_sek: 1
      - {service_id: vvs_install_faucet_standard, unit_price_sek: 5}
    blocked:
      - {start: tomorrow, end: 2026-12-01}
    colour: blue
  - id: prv_ok
    name: OK
    email: a@b.example
    postcodes: [111]
    hours: {weekdays: ["08:00-17:00"]}
    services: [{service_id: vvs_install_faucet_standard, price_sek: 100}]

  # a comment between providers
  - id: prv_ok
    name: OK again
    name: twice
    email: a@b.example
    postcodes: [111]
    hours: {}
    services: [{service_id: vvs_install_faucet_standard, price_sek: 100, duration: {minutes_per_unit: 5}}]
  - id: prv_ok
    name: Third
    email: a@b.example
    postcodes: [111]
    hours: {weekdays: ["08:00-17:00"]}
    services: [{service_id: vvs_install_faucet_standard, price_sek: 100}]
  - 17
  - id: prv_anchor
    name: Anchored
    email: a@b.example
    postcodes: &pc [111, 112]
    hours: {weekdays: ["08:00-17:00"]}
    services: [{service_id: vvs_install_faucet_standard, price_sek: 100}]
    more: *pc
version: 2
`

// TestParseInPartsAnswersAsTheWholeFile reads block-style files, and every
// variation of them by one line deleted, repeated or replaced, provider by
// provider and whole, and compares the answers; the files as written are
// read in parts.
//
// The national file's providers offer three services, one of each form a
// generated service line takes (a fixed price; a unit price with a minimum
// charge; one without): every line of a national file with every service
// has the shape of a line of this one, and provider 2 works Saturdays too.
// More services would only repeat the same edits on lines of the same
// shape, at a cost that grows with the square of the file's length.
func TestParseInPartsAnswersAsTheWholeFile(t *testing.T) {
	t.Parallel()
	c := cat(t)
	var national bytes.Buffer
	if err := supply.Generate(&national, c, supply.GenerateOptions{Providers: 3, Seed: 1, From: schedule.NewDate(2026, 11, 24),
		BusyHours: 3, National: true,
		Services: []string{"vvs_install_faucet_standard", "cleaning_window_per_window", "cleaning_home_recurring_hourly"}}); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`, price_sek: \d+\}\n`, `unit_price_sek: \d+, minimum_charge_sek: \d+\}\n`, `unit_price_sek: \d+\}\n`,
		`\n      saturday: \[`, `\n      - \{start: "`} {
		if !regexp.MustCompile(line).MatchString(national.String()) {
			t.Fatalf("the national file has no line matching %q:\n%s", line, national.String())
		}
	}
	indentless := strings.ReplaceAll(strings.ReplaceAll(validFile, "\n  - id:", "\n- id:"), "\n    ", "\n  ")
	files := map[string]string{"valid": validFile, "bad": badBlockFile, "national": national.String(), "indentless": indentless,
		"crlf": strings.ReplaceAll(validFile, "\n", "\r\n")}
	for name, file := range files {
		if !sameAsWhole(t, c, []byte(file)) {
			t.Errorf("%s file is not read in parts", name)
		}
		lines := strings.SplitAfter(file, "\n")
		for i := range lines {
			for _, edit := range []func(string) string{
				func(string) string { return "" },
				func(l string) string { return l + l },
				func(string) string { return "  - 1\n" },
				func(string) string { return "  - {id: x\n" },
				func(string) string { return "- y\n" },
				func(string) string { return "  x: *pc\n" },
				func(l string) string { return strings.Replace(l, ":", ": &pc", 1) },
				func(l string) string { return strings.Replace(l, "\"", "'", 1) },
				func(l string) string { return strings.Replace(l, " ", "\t", 1) },
				func(l string) string { return strings.Replace(l, "\n", "\r", 1) },
				func(string) string { return "---\n" },
				func(string) string { return "providers:\n" },
				func(l string) string { return strings.Replace(l, "  ", "", 1) },
				func(l string) string { return " " + l },
			} {
				edited := slicesWith(lines, i, edit(lines[i]))
				t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) { sameAsWhole(t, c, []byte(edited)) })
			}
		}
	}
}

func slicesWith(lines []string, i int, line string) string {
	return strings.Join(lines[:i], "") + line + strings.Join(lines[i+1:], "")
}

// TestNationalGenerateSpreadsProvidersOverSweden generates a national
// supply: deterministic, valid, every seeded service and 40 busy hours per
// provider, the cities dense and the north sparse, and every part of the
// postcode range (100 00–989 99) within some provider's reach.
func TestNationalGenerateSpreadsProvidersOverSweden(t *testing.T) {
	t.Parallel()
	c := cat(t)
	o := supply.GenerateOptions{Providers: 3000, Seed: 9, From: schedule.NewDate(2026, 11, 24), BusyHours: 40, National: true}
	var a, b bytes.Buffer
	if err := supply.Generate(&a, c, o); err != nil {
		t.Fatal(err)
	}
	if err := supply.Generate(&b, c, o); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("the same options gave different files (%v)", err)
	}
	ps, inParts, err := supply.ParseTellingParts("national.yaml", a.Bytes(), c)
	if !inParts {
		t.Fatal("a generated national file is not read in parts")
	}
	if err != nil || len(ps) != 3000 {
		t.Fatalf("parse: %d providers, %v", len(ps), err)
	}
	homes := map[int]int{} // providers by first postcode digit of their coverage
	covered := map[int]bool{}
	for _, p := range ps {
		if len(p.Services) != len(c.ServiceIDs()) || len(p.Blocked) != 40 || p.City == "" {
			t.Fatalf("%s: %d services, %d blocked, city %q", p.ID, len(p.Services), len(p.Blocked), p.City)
		}
		width := 0
		for _, r := range p.Postcodes {
			width += (r.To - r.From + 1) / 100
			for area := r.From / 100; area <= r.To/100; area++ {
				covered[area] = true
			}
		}
		if width < 1 || width > 30 {
			t.Fatalf("%s covers %d three-digit areas: %v", p.ID, width, p.Postcodes)
		}
		homes[p.Postcodes[0].From/10000]++
	}
	if homes[1] < 3*homes[9] || homes[4] < 2*homes[9] || homes[2] < homes[9] || homes[9] == 0 {
		t.Errorf("providers by first digit = %v; want Stockholm (1), Göteborg (4) and Malmö (2) dense, the north (9) sparse", homes)
	}
	for area := 100; area <= 989; area++ {
		if !covered[area] {
			t.Errorf("no provider covers %d xx", area)
		}
	}
	o.Postcodes = []string{"111"}
	if err := supply.Generate(&bytes.Buffer{}, c, o); err == nil {
		t.Error("a national supply took fixed postcodes")
	}
}

// TestImportStreamStoresTheFileInBatches imports a file read once, in
// batches within one transaction. A problem found after batches were
// written, or an error of ready, rolls the whole import back; ready sees
// every provider of the file before the commit.
//
// The file has 100 providers, imported 40 at a time (two full batches and
// a part, as 2500 at ImportStream's 1000 would be): the batching and the
// one transaction around the batches do not depend on the batch's size.
// It is still more providers than a scan reads ahead and more bytes than
// its reader's buffer. The last import is ImportStream's own, at its batch
// size.
func TestImportStreamStoresTheFileInBatches(t *testing.T) {
	t.Parallel()
	const providers, batch = 100, 40
	c := cat(t)
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	if err := supply.Generate(&buf, c, supply.GenerateOptions{Providers: providers, Seed: 4, From: schedule.NewDate(2026, 11, 24),
		BusyHours: 2, National: true}); err != nil {
		t.Fatal(err)
	}
	content := buf.Bytes()
	if providers <= 2*batch || providers%batch == 0 || providers <= supply.PartsAhead || len(content) <= 1<<16 {
		t.Fatalf("%d providers (%d bytes) in batches of %d: want two full batches and a part, more than %d providers and 64 KiB",
			providers, len(content), batch, supply.PartsAhead)
	}
	opener := func(b []byte) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	// The last provider's last price is out of range: found after two
	// batches were written.
	last := bytes.LastIndex(content, []byte("price_sek: "))
	bad := slices.Concat(content[:last], []byte("price_sek: -"), content[last+len("price_sek: "):])
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		st := sqlstore.Bind[supply.Tx](db)
		nothingStored := func(what string) {
			t.Helper()
			if _, err := storedSupply(ctx, db, "prv_gen_00001"); !errors.Is(err, bokat.ErrNotFound) {
				t.Fatalf("%s wrote providers: %v", what, err)
			}
		}
		_, _, err := supply.ImportStreamInBatches(ctx, st, c, "national.yaml", opener(bad), now, nil, batch)
		var perr *supply.Errors
		if !errors.As(err, &perr) || len(perr.Problems) != 1 || perr.Problems[0].Line <= bytes.Count(content[:last], []byte("\n")) {
			t.Fatalf("import of a file with a problem in its last provider: %v", err)
		}
		nothingStored("an import of a file with a problem")
		refused := errors.New("refused")
		var seen *supply.File
		_, _, err = supply.ImportStreamInBatches(ctx, st, c, "national.yaml", opener(content), now, func(f *supply.File) error {
			seen = f
			return refused
		}, batch)
		if !errors.Is(err, refused) || seen == nil || seen.Providers != providers || len(seen.Calendars) != providers {
			t.Fatalf("import refused by ready: %v, ready saw %+v", err, seen)
		}
		nothingStored("an import refused by ready")
		f, res, err := supply.ImportStreamInBatches(ctx, st, c, "national.yaml", opener(content), now, nil, batch)
		if err != nil || len(res.Created) != providers || res.Created[providers-1] != fmt.Sprintf("prv_gen_%05d", providers) {
			t.Fatalf("import: %v, %s", err, res)
		}
		if f.Name != "national.yaml" || f.Providers != providers || len(f.Calendars) != providers {
			t.Fatalf("import read %+v", f)
		}
		for _, p := range f.Calendars {
			if p.ID == "" || len(p.Calendars) != 0 {
				t.Fatalf("import kept %q with calendars %v from a file without calendars", p.ID, p.Calendars)
			}
		}
		want, err := supply.Parse("national.yaml", content, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, batch - 1, batch, providers - 1} {
			got, err := storedSupply(ctx, db, want[i].ID)
			if err != nil || !slices.Equal(got.Postcodes, want[i].Postcodes) || len(got.Blocked) != 2 || len(got.Services) != len(want[i].Services) {
				t.Fatalf("stored %s = %+v, %v", want[i].ID, got, err)
			}
		}
		if _, res, err := supply.ImportStream(ctx, st, c, "national.yaml", opener(content), now, nil); err != nil || len(res.Unchanged) != providers {
			t.Fatalf("second import: %v, %s", err, res)
		}
	})
}

// TestImportStreamReadsWholeAFileNotInParts: a file found not to read in
// parts after a batch was written (a later provider's alias to an earlier
// one's anchor) is rolled back and imported read whole, once.
func TestImportStreamReadsWholeAFileNotInParts(t *testing.T) {
	t.Parallel()
	c := cat(t)
	file := strings.Replace(validFile, `postcodes: ["111-118"`, `postcodes: &codes ["111-118"`, 1)
	file = strings.Replace(file, "postcodes: [411]", "postcodes: *codes", 1)
	if _, inParts, err := supply.ParseTellingParts("x.yaml", []byte(file), c); err != nil || inParts {
		t.Fatalf("the file reads in parts (%v) or has problems: %v", inParts, err)
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(file)), nil }
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		f, res, err := supply.ImportStreamInBatches(ctx, sqlstore.Bind[supply.Tx](db), c, "x.yaml", open, time.Now(), nil, 1)
		if err != nil || !slices.Equal(res.Created, []string{"prv_a", "prv_b"}) || len(res.Updated)+len(res.Unchanged) != 0 || f.Providers != 2 {
			t.Fatalf("import: %v, %s, %+v", err, res, f)
		}
		b, err := storedSupply(ctx, db, "prv_b")
		if err != nil || len(b.Postcodes) != 3 {
			t.Fatalf("prv_b stored with postcodes %v: %v", b.Postcodes, err)
		}
	})
}

func storedSupply(ctx context.Context, db *sqlstore.DB, id string) (bokat.ProviderSupply, error) {
	var p bokat.ProviderSupply
	err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
		var err error
		p, err = tx.ProviderSupply(ctx, id)
		return err
	})
	return p, err
}

// FuzzParseInParts compares reading a file provider by provider with
// reading it whole, on arbitrary edits of block-style files.
func FuzzParseInParts(f *testing.F) {
	for _, s := range []string{validFile, badBlockFile, string(supply.Demo())} {
		f.Add([]byte(s))
	}
	c := cat(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			t.Skip()
		}
		sameAsWhole(t, c, data)
	})
}
