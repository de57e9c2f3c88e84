package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bokat/internal/gobuild"
	"bokat/internal/sqlstore/sqlstoretest"
)

func TestParsePostcodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []postcode
		err      string
	}{
		{"default", defaultPostcode, []postcode{{"113 45", "Stockholm", 0.8}}, ""},
		{"dense and sparse", "113 45, 96140", []postcode{{"113 45", "Stockholm", 0.8}, {"961 40", "Boden", 0.9}}, ""},
		{"city given", "41106=Göteborg,352 30=Växjö", []postcode{{"411 06", "Göteborg", 0.8}, {"352 30", "Växjö", 0.9}}, ""},
		{"unknown city", "352 30", nil, "give the city"},
		{"not a postcode", "1134", nil, "want a Swedish postcode"},
		{"letters", "113 4x", nil, "want a Swedish postcode"},
		{"leading zero", "013 45=Nowhere", nil, "want a Swedish postcode"},
		{"twice", "113 45,11345", nil, "given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePostcodes(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("got %+v, want %+v", got[i], tt.want[i])
				}
			}
		})
	}
}

// TestSearchBodyFollowsThePostcode: the request of a postcode is the load's
// search with its postcode and city, nothing else changed.
func TestSearchBodyFollowsThePostcode(t *testing.T) {
	t.Parallel()
	if got := string(searchBodyFor(postcode{Code: "113 45", City: "Stockholm"})); got != searchBody {
		t.Errorf("113 45: %s, want the load's search", got)
	}
	body := searchBodyFor(postcode{Code: "961 40", City: "Boden"})
	var got, want map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(searchBody), &want); err != nil {
		t.Fatal(err)
	}
	want["location"] = map[string]any{"country_code": "SE", "postcode": "961 40", "city": "Boden"}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("961 40: %s, want %s", g, w)
	}
}

func TestNationalFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		err  string
	}{
		{[]string{"-postcode", "961 40"}, "-postcode needs -national"},
		{[]string{"-reimport"}, "-reimport needs -national"},
		{[]string{"-national", "10", "-large", "10"}, "modes of their own"},
		{[]string{"-national", "10", "-rate", "5"}, "-rate is not for national mode"},
		{[]string{"-national", "10", "-reimport", "-database", "sqlite:x.db"}, "-large-database"},
		{[]string{"-national", "10", "-reimport", "-postcode", "113 45,961 40"}, "one postcode"},
		{[]string{"-national", "-1"}, "-national must be"},
		{[]string{"-national", "10", "-postcode", "961"}, "want a Swedish postcode"},
	} {
		if _, err := parseConfig(tt.args); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: err = %v, want %q", tt.args, err, tt.err)
		}
	}
	c, err := parseConfig([]string{"-national", "10", "-reimport", "-rate", "20", "-postcode", "961 40"})
	if err != nil || !c.reimport || c.rate != 20 || c.postcodes[0].City != "Boden" {
		t.Errorf("reimport config = %+v, %v", c, err)
	}
}

// TestLoadToolNationalModeRuns runs national mode on a small national
// supply in a dense and a sparse postcode: each is searched with its own
// request, alternating with the demo server, and the report carries every
// figure. It checks no speed target.
func TestLoadToolNationalModeRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts two servers, imports a generated supply and generates load")
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"-national", "150", "-postcode", "113 45,961 40", "-duration", "150ms",
		"-rounds", "1", "-workers", "2", "-json"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	var rep nationalReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out.String())
	}
	if rep.Providers != 150 || rep.DemoMax <= 0 || rep.ImportSeconds <= 0 || rep.ImportCPUSeconds <= 0 || rep.ImportPeakRSSBytes < 1<<20 ||
		rep.WarmupSeconds <= 0 || rep.PeakRSSBytes < 1<<20 || rep.StartPeakRSSBytes < 1<<20 || len(rep.Postcodes) != 2 {
		t.Errorf("report = %+v", rep)
	}
	for i, want := range []string{"113 45", "961 40"} {
		p := rep.Postcodes[i]
		if p.Code != want || p.Options == 0 || p.ResponseBytes < 1000 || p.Max <= 0 || p.Ratio <= 0 || p.HalfLoadP99 <= 0 {
			t.Errorf("postcode %d = %+v, want figures for %s", i, p, want)
		}
	}
	if rep.Postcodes[0].City != "Stockholm" || rep.Postcodes[1].City != "Boden" || rep.Postcodes[1].Target != 0.9 {
		t.Errorf("postcodes = %+v", rep.Postcodes)
	}
	wantRuns := []string{"demo", "113 45", "961 40", "113 45", "961 40"}
	if len(rep.Runs) != len(wantRuns) {
		t.Fatalf("runs = %+v, want %v", rep.Runs, wantRuns)
	}
	for i, want := range wantRuns {
		if m := rep.Runs[i]; m.Server != want || m.Success != 1 || m.Requests == 0 {
			t.Errorf("run %d = %+v, want a successful %s run", i, m, want)
		}
	}
}

// TestLoadToolNationalModeRefusesAnEmptyPostcode: a postcode no provider
// of the supply covers is an error, not a rate of empty answers, and the
// tool says so from the generated supply, before it imports it (in either
// mode).
func TestLoadToolNationalModeRefusesAnEmptyPostcode(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-national", "150", "-postcode", "113 45,990 10=Testby", "-duration", "150ms", "-rounds", "1", "-workers", "2"},
		{"-national", "150", "-reimport", "-postcode", "990 10=Testby", "-bokat", "/nonexistent/bokat"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), args, &out)
		if err == nil || !strings.Contains(err.Error(), "offers nothing in 990 10: no provider of its 150 covers it") {
			t.Errorf("%q: err = %v, want the postcode without providers named", args, err)
		}
		if strings.Contains(out.String(), "import") {
			t.Errorf("%q: the tool imported before it refused the postcode:\n%s", args, out.String())
		}
	}
}

// TestLoadToolReimportModeRuns imports a small national supply again while
// bokat serve answers searches, on each engine: the import changes one
// provider, the change is seen, and the report carries every figure.
func TestLoadToolReimportModeRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds bokat, imports a generated supply twice and runs serve")
	}
	// One bokat for both engines, from the go command's cache: linked
	// only when its code changed since the last run.
	bin, err := gobuild.Cached(context.Background(), "bokat/cmd/bokat")
	if err != nil {
		t.Fatal(err)
	}
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := run(context.Background(), []string{"-national", "150", "-reimport", "-postcode", "961 40", "-rate", "20",
				"-duration", "300ms", "-bokat", bin, "-large-database", sqlstoretest.URL(t, engine), "-json"}, &out)
			if err != nil {
				t.Fatal(err)
			}
			var rep reimportReport
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("report is not JSON: %v\n%s", err, out.String())
			}
			if rep.Engine != string(engine) || rep.Providers != 150 || rep.ImportSeconds <= 0 || rep.ImportPeakRSSBytes < 1<<20 ||
				rep.ReadySeconds <= 0 || rep.WarmupSeconds <= 0 || rep.ServeRSSBytes < 1<<20 || rep.ServePeakRSS < 1<<20 ||
				rep.Rate != 20 || rep.ReimportSeconds <= 0 || rep.ReimportPeakRSS < 1<<20 || rep.ImportCPUSeconds <= 0 || rep.ReimportCPUSeconds <= 0 {
				t.Errorf("report = %+v", rep)
			}
			want := fmt.Sprintf("150 providers: 0 created, %d updated, %d unchanged", rep.Changed, 150-rep.Changed)
			if rep.Changed < 1 || rep.ReimportResult != want {
				t.Errorf("%d providers renamed: %q, want %q", rep.Changed, rep.ReimportResult, want)
			}
			if !rep.ChangeSeen || rep.SeenAfterStart <= 0 || rep.SeenAfterStart < rep.SeenAfterEnd {
				t.Errorf("change seen %v, %s after the start, %s after the end", rep.ChangeSeen, rep.SeenAfterStart, rep.SeenAfterEnd)
			}
			if rep.Searches["200"] < 2 || rep.LongestGap <= 0 || rep.ReloadMax <= 0 || rep.ReloadP99 > rep.ReloadMax {
				t.Errorf("searches %v, longest gap %s, reload p99 %s max %s", rep.Searches, rep.LongestGap, rep.ReloadP99, rep.ReloadMax)
			}
		})
	}
}

// TestSummarizeFindsTheGaps: the longest gap between successful searches,
// the one during the reload, and the change's times come from the searches'
// completion times, failures left out.
func TestSummarizeFindsTheGaps(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := func(sent, done int, code uint16, changed bool) searchResult {
		return searchResult{sent: at(sent), done: at(done), code: code, changed: changed}
	}
	searches := []searchResult{
		s(0, 10, 200, false),
		s(20, 30, 200, false),
		s(40, 2040, 200, false), // a 2 s gap before the import
		s(1000, 1010, 429, false),
		s(2995, 3005, 200, false), // the import runs 3000–4000
		s(3020, 3700, 0, false),
		s(3030, 3530, 200, false), // 525 ms gap during the reload
		s(3600, 4700, 200, true),  // answered out of order, after the next
		s(4050, 4500, 200, true),  // the change, first seen at 4500
		s(5000, 5010, 200, true),
	}
	rep := reimportReport{Searches: map[string]int{}}
	rep.summarize(searches, at(3000), at(4000))
	if want := map[string]int{"200": 8, "429": 1, "no answer": 1}; len(rep.Searches) != 3 ||
		rep.Searches["200"] != want["200"] || rep.Searches["429"] != 1 || rep.Searches["no answer"] != 1 {
		t.Errorf("searches = %v, want %v", rep.Searches, want)
	}
	if rep.LongestGap != 2010*time.Millisecond || rep.LongestGapEnd != -960*time.Millisecond {
		t.Errorf("longest gap %s ending %s, want 2.01s ending -960ms", rep.LongestGap, rep.LongestGapEnd)
	}
	if rep.ReloadGap != 970*time.Millisecond {
		t.Errorf("reload gap %s, want 970ms (3530–4500)", rep.ReloadGap)
	}
	if !rep.ChangeSeen || rep.SeenAfterStart != 1500*time.Millisecond || rep.SeenAfterEnd != 500*time.Millisecond {
		t.Errorf("change seen %v at +%s, +%s after the end", rep.ChangeSeen, rep.SeenAfterStart, rep.SeenAfterEnd)
	}
	// Sent from 3000 to 4500: latencies 680 (no answer), 500, 1100, 450.
	if rep.ReloadMax != 1100*time.Millisecond || rep.ReloadP99 != 1100*time.Millisecond {
		t.Errorf("reload p99 %s max %s, want 1.1s", rep.ReloadP99, rep.ReloadMax)
	}
}

// TestRenameCovering renames the providers whose postcodes cover the
// postcode, whatever the form of their entries, and no other line.
func TestRenameCovering(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	from, to := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	file := "# generated\nversion: 1\nproviders:\n" +
		"  - id: prv_gen_00001\n    name: Testfirma 00001 AB\n    city: Umeå\n    postcodes: [\"900-929\"]\n" +
		"  - id: prv_gen_00002\n    name: Testfirma 00002 AB\n    city: Boden\n    postcodes: [\"955-967\", \"970\"]\n" +
		"    blocked:\n      - {start: \"2026-11-26T08:00\", end: \"2026-11-26T09:00\"}\n" +
		"  - id: prv_gen_00003\n    name: \"Testfirma 00003 AB\"\n    postcodes: [\"900\", \"961 40\"]\n" +
		"  - id: prv_gen_00004\n    name: Testfirma 00004 AB\n    postcodes: [\"961 41-989\"]\n"
	if err := os.WriteFile(from, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := renameCovering(from, to, 96140, " (ny)")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"prv_gen_00002", "prv_gen_00003"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("renamed %v, want %v", got, want)
	}
	b, _ := os.ReadFile(to)
	want := strings.Replace(file, "name: Testfirma 00002 AB", `name: "Testfirma 00002 AB (ny)"`, 1)
	want = strings.Replace(want, `name: "Testfirma 00003 AB"`, `name: "Testfirma 00003 AB (ny)"`, 1)
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	covered, err := coveredPostcodes(from, []int{96140, 11345, 90000, 97500})
	if err != nil || fmt.Sprint(covered) != "[true false true true]" {
		t.Errorf("covered 961 40, 113 45, 900 00, 975 00: %v, %v; want [true false true true]", covered, err)
	}
	if _, err := renameCovering(from, to, 11345, " (ny)"); err == nil || !strings.Contains(err.Error(), "no provider covers 113 45") {
		t.Errorf("a postcode nobody covers: err = %v", err)
	}
}
