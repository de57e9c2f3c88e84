package supply_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/supply"
)

// sameAsWhole fails unless Parse, reading the file provider by provider
// where it can, answers exactly as reading its whole node tree does: the
// same providers, or the same problems at the same places.
func sameAsWhole(t *testing.T, c *catalog.Catalog, data []byte) {
	t.Helper()
	got, err := supply.Parse("x.yaml", data, c)
	want, wantErr := supply.ParseWhole("x.yaml", data, c)
	if !reflect.DeepEqual(got, want) || errText(err) != errText(wantErr) {
		t.Fatalf("file:\n%s\nin parts: %d providers, %v\nwhole: %d providers, %v", data, len(got), err, len(want), wantErr)
	}
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
func TestParseInPartsAnswersAsTheWholeFile(t *testing.T) {
	t.Parallel()
	c := cat(t)
	var national bytes.Buffer
	if err := supply.Generate(&national, c, supply.GenerateOptions{Providers: 3, Seed: 1, From: schedule.NewDate(2026, 11, 24),
		BusyHours: 3, National: true}); err != nil {
		t.Fatal(err)
	}
	indentless := strings.ReplaceAll(strings.ReplaceAll(validFile, "\n  - id:", "\n- id:"), "\n    ", "\n  ")
	files := map[string]string{"valid": validFile, "bad": badBlockFile, "national": national.String(), "indentless": indentless,
		"crlf": strings.ReplaceAll(validFile, "\n", "\r\n")}
	for name, file := range files {
		if !supply.ReadsInParts([]byte(file), c) {
			t.Errorf("%s file is not read in parts", name)
		}
		sameAsWhole(t, c, []byte(file))
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
