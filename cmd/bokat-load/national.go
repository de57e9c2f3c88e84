package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/supply"
)

// National mode (-national N) measures search over a national supply: N
// providers spread over the whole country (bokat supply generate
// --national, 40 one-hour blocked periods each), in each postcode of
// -postcode, against the demo supply's search in 113 45, as scale mode
// (-large) does for a supply that all covers one postcode. The national
// server searches each postcode in turn with the same process and store,
// alternating with the demo server round by round, so the postcodes'
// ratios come from one run. Its supply is generated into a file and
// imported by a process of its own, as `bokat supply import` runs apart
// from `bokat serve`.

// defaultPostcode is -postcode's default: the densest postcode area of the
// national supply.
const defaultPostcode = "113 45"

// postcode is a searched postcode, with the city of the request and the
// least ratio of its rate to the demo supply's.
type postcode struct {
	Code   string  `json:"postcode"`
	City   string  `json:"city"`
	Target float64 `json:"target_ratio"`
}

// knownCities name the city of the postcodes the figures use.
var knownCities = map[string]string{"113 45": "Stockholm", "961 40": "Boden"}

// parsePostcodes reads -postcode: comma-separated entries NNN NN (the
// city known) or NNN NN=City.
func parsePostcodes(s string) ([]postcode, error) {
	var out []postcode
	seen := map[string]bool{}
	for entry := range strings.SplitSeq(s, ",") {
		code, city, _ := strings.Cut(strings.TrimSpace(entry), "=")
		digits := strings.ReplaceAll(strings.TrimSpace(code), " ", "")
		area, err := strconv.Atoi(digits)
		if len(digits) != 5 || err != nil || area < 10000 {
			return nil, fmt.Errorf("-postcode %q: want a Swedish postcode, NNN NN", entry)
		}
		code = digits[:3] + " " + digits[3:]
		if city = strings.TrimSpace(city); city == "" {
			city = knownCities[code]
		}
		if city == "" {
			return nil, fmt.Errorf("-postcode %q: give the city too, as %s=City", entry, code)
		}
		if seen[code] {
			return nil, fmt.Errorf("-postcode: %s given twice", code)
		}
		seen[code] = true
		out = append(out, postcode{Code: code, City: city, Target: ratioTarget(area / 100)})
	}
	return out, nil
}

// ratioTarget is the least rate, relative to the demo supply's, of search
// in a three-digit postcode area: 0.8 in the big cities' areas (Stockholm
// 100–199, Malmö 200–239, Göteborg 400–449), where the most providers
// live and a search weighs the most of them, 0.9 elsewhere (issue 29).
func ratioTarget(area int) float64 {
	if (area >= 100 && area <= 239) || (area >= 400 && area <= 449) {
		return 0.8
	}
	return 0.9
}

// searchBodyFor is the load's search (searchBody) in pc.
func searchBodyFor(pc postcode) []byte {
	loc, _ := json.Marshal(struct {
		Postcode string `json:"postcode"`
		City     string `json:"city"`
	}{pc.Code, pc.City})
	const from = `"postcode":"113 45","city":"Stockholm"`
	return []byte(strings.Replace(searchBody, from, string(loc[1:len(loc)-1]), 1))
}

// checkNational checks the national and reimport modes' flags;
// postcodeGiven says whether -postcode was.
func (c config) checkNational(postcodeGiven bool) error {
	switch {
	case c.national < 0 || c.national > supply.MaxGenerateProviders:
		return fmt.Errorf("-national must be in 0..%d", supply.MaxGenerateProviders)
	case c.national > 0 && (c.large > 0 || c.calendars > 0):
		return errors.New("-national, -large and -calendars are modes of their own: give one")
	case c.reimport && c.national == 0:
		return errors.New("-reimport needs -national N: the supply it imports again")
	case c.national == 0 && postcodeGiven:
		return errors.New("-postcode needs -national N")
	case c.national > 0 && !c.reimport && c.rate != 0:
		return errors.New("-rate is not for national mode (only with -reimport: the steady search rate)")
	case c.reimport && c.database != "":
		return errors.New("-reimport has one store, the national supply's: give it as -large-database")
	case c.reimport && len(c.postcodes) != 1:
		return errors.New("-reimport searches one postcode")
	case c.rate < 0:
		return errors.New("-rate must not be negative")
	}
	return nil
}

// writeNationalSupply writes the national supply of n providers (seed 1,
// 40 busy hours each over the 14 days from today) to path.
func writeNationalSupply(path string, n int) error {
	cat, err := catalog.Load()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = supply.Generate(f, cat, supply.GenerateOptions{Providers: n, Seed: 1, From: schedule.DateOf(time.Now()),
		BusyHours: 40, National: true})
	return errors.Join(err, f.Close())
}

// checkCovered returns an error naming the first of pcs that no provider
// of the supply file at path (n providers) covers: search there offers
// nothing, so the mode refuses it before it imports the supply or starts
// a server.
func checkCovered(path string, n int, pcs []postcode) error {
	codes := make([]int, len(pcs))
	for i, pc := range pcs {
		codes[i], _ = strconv.Atoi(strings.ReplaceAll(pc.Code, " ", ""))
	}
	covered, err := coveredPostcodes(path, codes)
	if err != nil {
		return err
	}
	for i, pc := range pcs {
		if !covered[i] {
			return fmt.Errorf("the national supply offers nothing in %s: no provider of its %d covers it (take more)", pc.Code, n)
		}
	}
	return nil
}

// nationalReport is the outcome of national mode.
type nationalReport struct {
	Providers int `json:"providers"`
	// ImportSeconds and ImportPeakRSSBytes are the importing process's
	// (zero for -in-process); WarmupSeconds is the national server's
	// search index build.
	ImportSeconds      float64           `json:"import_seconds"`
	ImportCPUSeconds   float64           `json:"import_cpu_seconds,omitempty"`
	ImportPeakRSSBytes int64             `json:"import_peak_rss_bytes,omitempty"`
	WarmupSeconds      float64           `json:"index_warmup_seconds"`
	Runs               []measurement     `json:"runs"`
	DemoMax            float64           `json:"demo_max_rps"`
	Postcodes          []postcodeOutcome `json:"postcodes"`
	StartPeakRSSBytes  int64             `json:"peak_rss_after_warmup_bytes"`
	PeakRSSBytes       int64             `json:"peak_rss_bytes"`
	Load               map[string]string `json:"load_average"`
	TargetsMet         bool              `json:"targets_met"`
}

// postcodeOutcome is the national server's outcome in one postcode.
type postcodeOutcome struct {
	postcode
	Options        int           `json:"options"`
	ResponseBytes  int           `json:"response_bytes"`
	Max            float64       `json:"max_rps"`
	Ratio          float64       `json:"ratio"`
	CPURatio       float64       `json:"cpu_ratio,omitempty"`
	HalfLoadTarget float64       `json:"half_load_rps"`
	HalfLoadP99    time.Duration `json:"half_load_p99_ns"`
	Met            bool          `json:"targets_met"`
}

func runNational(ctx context.Context, c config, out io.Writer) error {
	progress := progressTo(out, c)
	rep := nationalReport{Providers: c.national, Load: map[string]string{"start": loadAvg()}}
	dir, err := os.MkdirTemp("", "bokat-load-national-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "national.yaml")
	if err := writeNationalSupply(path, c.national); err != nil {
		return err
	}
	if err := checkCovered(path, c.national, c.postcodes); err != nil {
		return err
	}
	demo, err := startServer(ctx, serverSpec{Kind: "search", Database: c.database, SupplyName: supply.DemoName},
		supply.Demo(), c.inProcess)
	if err != nil {
		return fmt.Errorf("demo server: %w", err)
	}
	defer demo.Close()
	progress("national supply of %d providers generated; importing it and starting its server (load %s)", c.national, loadAvg())
	started := time.Now()
	national, err := startServer(ctx, serverSpec{Kind: "search", Database: c.largeDatabase, SupplyName: "national.yaml",
		SupplyFile: path, Body: string(searchBodyFor(c.postcodes[0])),
		CPUProfile: absPath(c.profile, c.inProcess), HeapProfile: absPath(c.heap, c.inProcess)}, nil, c.inProcess)
	if err != nil {
		return fmt.Errorf("national server: %w", err)
	}
	defer national.Close()
	rep.ImportSeconds, rep.ImportPeakRSSBytes = national.ImportTime.Seconds(), national.ImportPeakRSS
	rep.ImportCPUSeconds = national.ImportCPU.Seconds()
	if rep.ImportSeconds == 0 { // in this process: import and warm-up together
		rep.ImportSeconds = (time.Since(started) - national.Warmup).Seconds()
	}
	rep.WarmupSeconds = national.Warmup.Seconds()
	rep.StartPeakRSSBytes, _ = national.PeakRSS()
	progress("imported in %.1f s, search index built in %.2f s (load %s)", rep.ImportSeconds, rep.WarmupSeconds, loadAvg())

	subjects := make([]subject, len(c.postcodes))
	for i, pc := range c.postcodes {
		srv := *national // the same process, searched in pc
		srv.Body = searchBodyFor(pc)
		answer, err := postBody(srv.URL, srv.Body)
		if err != nil {
			return fmt.Errorf("national server in %s: %w", pc.Code, err)
		}
		n, err := countOptions(answer)
		if err != nil || n == 0 {
			return fmt.Errorf("the national supply offers nothing in %s (%d providers; take more): %s", pc.Code, c.national, answer)
		}
		subjects[i] = subject{srv: &srv, name: pc.Code, target: pc.Target}
		rep.Postcodes = append(rep.Postcodes, postcodeOutcome{postcode: pc, Options: n, ResponseBytes: len(answer)})
	}
	rep.Load["before_attacks"] = loadAvg()
	cmp, err := compare(ctx, c, demo, "demo", subjects...)
	if err != nil {
		return err
	}
	rep.Runs, rep.DemoMax, rep.TargetsMet = cmp.runs, cmp.refMax, cmp.met
	for i, o := range cmp.subjects {
		p := &rep.Postcodes[i]
		p.Max, p.Ratio, p.CPURatio, p.HalfLoadTarget, p.HalfLoadP99, p.Met = o.max, o.ratio, o.cpuRatio, o.halfTarget, o.halfP99, o.met
	}
	rep.PeakRSSBytes, _ = national.PeakRSS()
	rep.Load["end"] = loadAvg()
	return emit(out, c, rep, rep.TargetsMet, "each postcode's ratio >= its target (0.80 in the big cities, 0.90 elsewhere) and p99 < 10ms at half load",
		func() { printNationalReport(out, rep, c) })
}

func printNationalReport(w io.Writer, rep nationalReport, c config) {
	fmt.Fprintf(w, "national supply: %d providers over the whole country, 40 busy hours each\n", rep.Providers)
	if rep.ImportPeakRSSBytes > 0 {
		fmt.Fprintf(w, "import (a process of its own): %.1f s, CPU %.1f s, peak RSS %d MB\n", rep.ImportSeconds, rep.ImportCPUSeconds,
			rep.ImportPeakRSSBytes>>20)
	} else {
		fmt.Fprintf(w, "import (in this process): %.1f s\n", rep.ImportSeconds)
	}
	fmt.Fprintf(w, "search index built in %.2f s; %d workers; %s per attack; load average %s at start, %s before the attacks\n\n",
		rep.WarmupSeconds, c.workers, c.duration, rep.Load["start"], rep.Load["before_attacks"])
	printRuns(w, rep.Runs, 1)
	fmt.Fprintln(w)
	for _, p := range rep.Postcodes {
		verdict := "met"
		if !p.Met {
			verdict = "MISSED"
		}
		cpu := ""
		if p.CPURatio > 0 {
			cpu = fmt.Sprintf("; CPU per request demo/national %.3f", p.CPURatio)
		}
		fmt.Fprintf(w, "%s %s (%d options, %d bytes): %.1f req/s / demo %.1f req/s = ratio %.3f (target >= %.2f)%s\n",
			p.Code, p.City, p.Options, p.ResponseBytes, p.Max, rep.DemoMax, p.Ratio, p.Target, cpu)
		fmt.Fprintf(w, "  p99 at %.1f req/s (half its maximum): %s (target < 10ms); %s\n",
			p.HalfLoadTarget, p.HalfLoadP99.Round(10*time.Microsecond), verdict)
	}
	if rep.PeakRSSBytes > 0 {
		what := "the national server's process"
		if c.inProcess {
			what = "this process (both servers and the load generator)"
		}
		fmt.Fprintf(w, "peak RSS of %s: %d MB (%d MB once its index was built)\n", what, rep.PeakRSSBytes>>20, rep.StartPeakRSSBytes>>20)
	}
	verdict := "met"
	if !rep.TargetsMet {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "load average at the end %s\ntargets %s\n", rep.Load["end"], verdict)
}

// progressTo returns a function that reports progress of a long mode: on
// out, or on stderr when out carries JSON.
func progressTo(out io.Writer, c config) func(format string, args ...any) {
	w := out
	if c.jsonOut {
		w = os.Stderr
	}
	return func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
}
