package supply_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"bokat"
	"bokat/internal/supply"
)

// FuzzParse feeds Parse arbitrary files. Properties: it never panics; it
// returns providers or *Errors, never both; the same file always gives the
// same answer; every problem is one clear line (non-empty, one line, no
// formatting slips, located inside the file, in file order); and what it
// accepts holds the file format's promises (ids, names, contact data,
// postcodes, hours, services and blocked periods within their limits).
func FuzzParse(f *testing.F) {
	// Seeds: the files of the parser tests and the demo supply.
	for _, s := range []string{
		validFile,
		string(supply.Demo()),
		"",
		"providers: [\n",
		"version: 1\nproviders: []\n",
		"version: 1\n",
		"- 1\n",
		"version: 1\nproviders:\n  - {id: p, name: P, postcodes: [111], hours: {}, services: [{service_id: vvs_install_faucet_standard, price_sek: 1}]}\n",
		"version: 1\nproviders:\n  - {id: p, name: P, postcodes: [111], hours: {weekdays: [\"08:00-17:00\"]}, services: [{service_id: vvs_install_faucet_standard, price_sek: 1, duration: {minutes_per_unit: 5}}]}\n",
		"version: 2\nproviders:\n  - id: Bad Id\n    name: \"\"\n    email: Bokning <bokning@firma.example>\n    postcodes: [\"abc\", \"118-111\"]\n    hours:\n      weekdays: [\"08:00-17:00\"]\n      monday: [\"09:00-10:00\"]\n      saturday: [\"17:00-08:00\"]\n    services:\n      - service_id: no_such_service\n        price_sek: 1\n    blocked:\n      - {start: tomorrow, end: 2026-12-01}\n    colour: blue\n",
		contactFile("    email: a.b+c@sub.firma.example\n    phone: \"+46 (0)8-465 004 01\"\n"),
		contactFile("    email: a@b.example\n    phone: 0846500401\n"),
		contactFile("    email:\n"),
		contactFile("    email: [a@b.example]\n"),
		contactFile("    email: a@b.example\n    phone: 08+46500401\n"),
		"\r- 1",                                // a lone CR ends a line for YAML
		"version: 1\u0085providers:\u0085 - 1", // so does NEL
		"version: 1\u2028providers: [1]\u2029", // and LS, PS
		"base: &p {id: p, name: P, email: a@b.example, postcodes: [111], hours: {weekdays: [\"08:00-17:00\"]}, services: [{service_id: vvs_install_faucet_standard, price_sek: 1}]}\nversion: 1\nproviders: [*p, *p]\n",
	} {
		f.Add([]byte(s))
	}
	c := cat(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			t.Skip() // supply files are read whole; the parser's cost is linear in them
		}
		got, err := supply.Parse("x.yaml", data, c)
		again, err2 := supply.Parse("x.yaml", data, c)
		if !reflect.DeepEqual(got, again) || errText(err) != errText(err2) {
			t.Fatalf("Parse is not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if got != nil {
				t.Fatalf("Parse returned providers and the error %v", err)
			}
			checkProblems(t, data, err)
			return
		}
		checkSupply(t, got)
	})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func checkProblems(t *testing.T, data []byte, err error) {
	t.Helper()
	var perr *supply.Errors
	if !errors.As(err, &perr) {
		t.Fatalf("Parse error %v (%T) is not *Errors", err, err)
	}
	if perr.File != "x.yaml" || len(perr.Problems) == 0 {
		t.Fatalf("Errors %+v names another file or no problem", perr)
	}
	lines := yamlLines(data)
	last := 0
	for _, p := range perr.Problems {
		msg := perr.Line(p)
		switch {
		case strings.TrimSpace(p.Message) == "":
			t.Fatalf("problem %+v has no message", p)
		case strings.ContainsAny(msg, "\n\r"):
			t.Fatalf("problem %q spans several lines", msg)
		case strings.Contains(msg, "%!"):
			t.Fatalf("problem %q has a formatting slip", msg)
		case !utf8.ValidString(p.Path):
			t.Fatalf("problem %q has a path that is not UTF-8", msg)
		case p.Line < 0 || p.Column < 0 || p.Line > lines:
			t.Fatalf("problem %q is at line %d of a %d-line file", msg, p.Line, lines)
		case p.Line < last:
			t.Fatalf("problems are not in file order: %v", perr)
		}
		last = p.Line
	}
	if n := len(strings.Split(perr.Error(), "\n")); n != len(perr.Problems) {
		t.Fatalf("Error() has %d lines for %d problems", n, len(perr.Problems))
	}
}

// yamlLines counts a file's lines as the YAML reader does, so that a
// problem's line is checked against the lines it names: a lone CR, CR LF,
// LF, NEL (U+0085) and the line and paragraph separators (U+2028, U+2029)
// each end a line.
func yamlLines(data []byte) int {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	n := 1
	for _, r := range s {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}

func checkSupply(t *testing.T, got []bokat.ProviderSupply) {
	t.Helper()
	if len(got) == 0 {
		t.Fatal("Parse accepted a file without providers")
	}
	seen := map[string]bool{}
	for _, p := range got {
		switch n := utf8.RuneCountInString(p.Name); {
		case !supply.ProviderIDPattern.MatchString(p.ID) || seen[p.ID]:
			t.Fatalf("provider id %q is malformed or repeated", p.ID)
		case n < 1 || n > 160 || p.Name != strings.TrimSpace(p.Name):
			t.Fatalf("provider %s: name %q", p.ID, p.Name)
		case p.Email == "" || len(p.Email) > supply.MaxEmailLen || strings.ContainsAny(p.Email, "<> \n"):
			t.Fatalf("provider %s: email %q", p.ID, p.Email)
		case p.Phone != "" && (len(p.Phone) > supply.MaxPhoneLen || strings.Trim(p.Phone, "0123456789 -()+") != ""):
			t.Fatalf("provider %s: phone %q", p.ID, p.Phone)
		case p.HorizonDays < 1 || p.HorizonDays > supply.MaxHorizonDays || p.MinNoticeMinutes < 0 || p.MinNoticeMinutes > 7*24*60:
			t.Fatalf("provider %s: horizon %d days, notice %d minutes", p.ID, p.HorizonDays, p.MinNoticeMinutes)
		case len(p.Postcodes) == 0 || len(p.Hours) == 0 || len(p.Services) == 0:
			t.Fatalf("provider %s lacks postcodes, hours or services: %+v", p.ID, p)
		}
		seen[p.ID] = true
		for _, r := range p.Postcodes {
			if r.From < 10000 || r.From > r.To || r.To > 99999 {
				t.Fatalf("provider %s: postcode range %+v", p.ID, r)
			}
		}
		for _, h := range p.Hours {
			if h.StartMinute < 0 || h.StartMinute >= h.EndMinute || h.EndMinute > 24*60 {
				t.Fatalf("provider %s: working range %+v", p.ID, h)
			}
		}
		for _, s := range p.Services {
			if _, ok := cat(t).Service(s.ServiceID); !ok || s.PriceSEK < 0 || s.UnitPriceSEK < 0 || s.PriceSEK > supply.MaxPriceSEK || s.UnitPriceSEK > supply.MaxPriceSEK ||
				(s.PriceSEK == 0) == (s.UnitPriceSEK == 0) {
				t.Fatalf("provider %s: service %+v", p.ID, s)
			}
		}
		for _, b := range p.Blocked {
			if !b.Start.Before(b.End) || b.ID != supply.BlockedPeriodID(p.ID, b.Start, b.End) {
				t.Fatalf("provider %s: blocked period %+v", p.ID, b)
			}
		}
	}
}
