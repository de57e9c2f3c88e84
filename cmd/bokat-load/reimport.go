package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"bokat"
	"bokat/internal/gobuild"
	"bokat/internal/supply"
)

// Reimport mode (-national N -reimport) measures an import of the whole
// national supply while `bokat serve` answers searches, with the real
// program: it builds bokat (or takes -bokat), imports the national supply
// (`bokat supply import`) into -large-database (a fresh SQLite file by
// default), starts `bokat serve` on it with the search quota raised above
// the load's rate (the quota stays in the path, as deployed), waits for
// /readyz, and searches -postcode at a steady -rate (default 50/s, open
// loop). After -duration of that it imports the whole supply again with
// one change, a suffix to the name of every provider covering the
// postcode (search rotates the providers it offers first every quarter
// hour, so one renamed provider may drop out of the answers; this way every
// answer from the new supply carries the change), and searches on until an
// answer carries the new names and -duration more. It
// reports the searches by status, the longest gap between two successful
// searches (completion times) over the run and during the reload, the
// searches' latency from the import's start to the change seen, when the
// change was first seen (after the import started and after it ended),
// the imports' wall and CPU time and peak RSS, and serve's warm-up, RSS, peak RSS
// and CPU time over the reload.

// reimportReport is the outcome of reimport mode.
type reimportReport struct {
	Providers          int            `json:"providers"`
	Engine             string         `json:"engine"`
	Postcode           postcode       `json:"postcode"`
	ImportSeconds      float64        `json:"import_seconds"`
	ImportCPUSeconds   float64        `json:"import_cpu_seconds"`
	ImportPeakRSSBytes int64          `json:"import_peak_rss_bytes"`
	ReadySeconds       float64        `json:"serve_ready_seconds"`
	WarmupSeconds      float64        `json:"index_warmup_seconds"`
	ServeRSSBytes      int64          `json:"serve_rss_before_bytes"`
	Rate               int            `json:"search_rate"`
	Changed            int            `json:"renamed_providers"`
	ReimportSeconds    float64        `json:"reimport_seconds"`
	ReimportCPUSeconds float64        `json:"reimport_cpu_seconds"`
	ReimportPeakRSS    int64          `json:"reimport_peak_rss_bytes"`
	ReimportResult     string         `json:"reimport_result"`
	Searches           map[string]int `json:"searches_by_status"`
	LongestGap         time.Duration  `json:"longest_gap_ns"`
	// LongestGapEnd is when the longest gap ended, from the import's start
	// (negative: before it).
	LongestGapEnd time.Duration `json:"longest_gap_end_ns"`
	// ReloadGap is the longest gap that overlaps the reload: from the
	// import's start to the change first seen.
	ReloadGap  time.Duration `json:"longest_gap_during_reload_ns"`
	ReloadP99  time.Duration `json:"reload_p99_ns"`
	ReloadMax  time.Duration `json:"reload_max_ns"`
	ChangeSeen bool          `json:"change_seen"`
	// SeenAfterStart and SeenAfterEnd are from the import's start and end
	// to the first answer carrying the change.
	SeenAfterStart  time.Duration     `json:"change_seen_after_import_start_ns"`
	SeenAfterEnd    time.Duration     `json:"change_seen_after_import_end_ns"`
	ServeCPUSeconds float64           `json:"serve_cpu_during_reload_seconds"`
	ServePeakRSS    int64             `json:"serve_peak_rss_bytes"`
	Load            map[string]string `json:"load_average"`
}

// searchResult is one search of the steady loop: when it was sent and
// answered, its status (0: no answer) and whether it carried the change.
type searchResult struct {
	sent, done time.Time
	code       uint16
	changed    bool
}

func runReimport(ctx context.Context, c config, out io.Writer) error {
	progress := progressTo(out, c)
	dir, err := os.MkdirTemp("", "bokat-load-reimport-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := bokatProgram(ctx, c, progress)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "national.yaml")
	if err := writeNationalSupply(path, c.national); err != nil {
		return err
	}
	if err := checkCovered(path, c.national, c.postcodes); err != nil {
		return err
	}
	db := c.largeDatabase
	if db == "" {
		db = "sqlite:" + filepath.Join(dir, "national.db")
	}
	rate := c.rate
	if rate == 0 {
		rate = 50
	}
	pc := c.postcodes[0]
	rep := reimportReport{Providers: c.national, Engine: strings.SplitN(db, ":", 2)[0], Postcode: pc, Rate: rate,
		Searches: map[string]int{}, Load: map[string]string{"start": loadAvg()}}
	// bokat runs the program to its end and returns its output, wall time,
	// CPU time and peak RSS.
	bokat := func(args ...string) (output []byte, took, cpu time.Duration, peak int64, err error) {
		cmd := exec.CommandContext(ctx, bin, append(args, "--database", db)...)
		cmd.Env = append(os.Environ(), "BOKAT_MAIL_DIR="+filepath.Join(dir, "mail"))
		started := time.Now()
		output, err = cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("bokat %s: %w\n%s", strings.Join(args, " "), err, output)
		}
		return output, time.Since(started), cpuTime(cmd.ProcessState), maxRSS(cmd.ProcessState), err
	}
	if _, _, _, _, err := bokat("migrate"); err != nil {
		return err
	}
	progress("national supply of %d providers generated; importing it (%s, load %s)", c.national, rep.Engine, loadAvg())
	_, took, cpu, peak, err := bokat("supply", "import", path)
	if err != nil {
		return err
	}
	rep.ImportSeconds, rep.ImportCPUSeconds, rep.ImportPeakRSSBytes = took.Seconds(), cpu.Seconds(), peak

	// serve, with the search quota (per client address: the load has one)
	// twice the load's rate.
	addr, err := freeLocalAddr()
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	serve := exec.Command(bin, "serve", "--database", db, "--addr", addr, "--rate-search", fmt.Sprintf("%d/min", 2*60*rate),
		"--log-level", "warn", "--mail-dir", filepath.Join(dir, "mail"))
	serve.Stdout, serve.Stderr = logFile, logFile
	started := time.Now()
	if err := serve.Start(); err != nil {
		return err
	}
	defer func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		_ = serve.Wait()
	}()
	base, pid := "http://"+addr, serve.Process.Pid
	serveLog := func() string { b, _ := os.ReadFile(logFile.Name()); return string(b) }
	if err := waitFor(ctx, 10*time.Minute, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		return fmt.Errorf("serve did not get ready: %w\n%s", err, serveLog())
	}
	rep.ReadySeconds = time.Since(started).Seconds()
	rep.WarmupSeconds, _ = metricValue(base, "bokat_search_index_warmup_seconds")
	url := base + "/v1/booking-options"
	body := searchBodyFor(pc)
	answer, err := postBody(url, body)
	if err != nil {
		return err
	}
	if n, err := countOptions(answer); err != nil || n == 0 {
		return fmt.Errorf("the national supply offers nothing in %s (%d providers; take more): %s", pc.Code, c.national, answer)
	}
	rep.ServeRSSBytes, _ = procStatus(pid, "VmRSS:")
	progress("imported in %.1f s (peak RSS %d MB); serve ready in %.1f s (index %.2f s), RSS %d MB (load %s)",
		rep.ImportSeconds, rep.ImportPeakRSSBytes>>20, rep.ReadySeconds, rep.WarmupSeconds, rep.ServeRSSBytes>>20, loadAvg())

	// The change: every provider covering the postcode gets a new name,
	// so that every answer from the new supply shows it, whichever of them
	// the quarter-hour's rotation puts first.
	const suffix = " (ny)"
	changed := filepath.Join(dir, "national-changed.yaml")
	digits, _ := strconv.Atoi(strings.ReplaceAll(pc.Code, " ", ""))
	renamed, err := renameCovering(path, changed, digits, suffix)
	if err != nil {
		return err
	}
	rep.Changed = len(renamed)
	marker, _ := json.Marshal(suffix)
	marker = marker[1:] // the end of a JSON string ending in suffix
	if bytes.Contains(answer, marker) {
		return fmt.Errorf("an answer before the change carries %s already", marker)
	}

	// The steady loop, in the background.
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	atk := vegeta.NewAttacker(vegeta.KeepAlive(true), vegeta.MaxBody(-1), vegeta.Timeout(30*time.Second))
	results := atk.Attack(vegeta.NewStaticTargeter(vegeta.Target{Method: "POST", URL: url, Body: body, Header: h}),
		vegeta.Rate{Freq: rate, Per: time.Second}, 0, "reimport")
	// The collector owns searches until collected is closed.
	var searches []searchResult
	seen, seenClosed := make(chan struct{}), false
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for r := range results {
			s := searchResult{sent: r.Timestamp, done: r.End(), code: r.Code,
				changed: r.Code == http.StatusOK && bytes.Contains(r.Body, marker)}
			if s.changed && !seenClosed {
				close(seen)
				seenClosed = true
			}
			searches = append(searches, s)
		}
	}()
	stop := func() { atk.Stop(); <-collected }
	pause := func(d time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
			return nil
		}
	}
	if err := pause(c.duration); err != nil {
		stop()
		return err
	}

	rep.Load["before_reimport"] = loadAvg()
	progress("searching %s at %d/s; importing the whole supply again with the %d providers covering it renamed (load %s)",
		pc.Code, rate, rep.Changed, loadAvg())
	cpu0, _ := procCPU(pid)
	importStart := time.Now()
	output, took, cpu, peak, err := bokat("supply", "import", changed)
	importEnd := time.Now()
	if err != nil {
		stop()
		return err
	}
	rep.ReimportSeconds, rep.ReimportCPUSeconds, rep.ReimportPeakRSS = took.Seconds(), cpu.Seconds(), peak
	rep.ReimportResult = strings.SplitN(strings.TrimSpace(string(output)), "\n", 2)[0]
	rep.ReimportResult = strings.TrimPrefix(rep.ReimportResult, "imported "+changed+": ")
	select {
	case <-seen:
	case <-ctx.Done():
	case <-time.After(10 * time.Minute):
	}
	cpu1, _ := procCPU(pid)
	rep.ServeCPUSeconds = (cpu1 - cpu0).Seconds()
	if err := pause(c.duration); err != nil {
		stop()
		return err
	}
	stop()
	rep.Load["end"] = loadAvg()
	rep.ServePeakRSS, _ = procStatus(pid, "VmHWM:")
	rep.summarize(searches, importStart, importEnd)
	if c.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReimportReport(out, rep)
	return nil
}

// summarize fills in the figures of the searches: by status, the longest
// gaps between successful ones, the latencies of the reload, the change.
func (rep *reimportReport) summarize(searches []searchResult, importStart, importEnd time.Time) {
	var ok []time.Time
	var seenAt time.Time
	for _, s := range searches {
		status := strconv.Itoa(int(s.code))
		if s.code == 0 {
			status = "no answer"
		}
		rep.Searches[status]++
		if s.code == http.StatusOK {
			ok = append(ok, s.done)
		}
		if s.changed && (seenAt.IsZero() || s.done.Before(seenAt)) {
			seenAt = s.done
		}
	}
	rep.ChangeSeen = !seenAt.IsZero()
	reloadEnd := seenAt
	if !rep.ChangeSeen {
		reloadEnd = importEnd
	} else {
		rep.SeenAfterStart, rep.SeenAfterEnd = seenAt.Sub(importStart), seenAt.Sub(importEnd)
	}
	slices.SortFunc(ok, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(ok); i++ {
		gap := ok[i].Sub(ok[i-1])
		if gap > rep.LongestGap {
			rep.LongestGap, rep.LongestGapEnd = gap, ok[i].Sub(importStart)
		}
		if ok[i].After(importStart) && ok[i-1].Before(reloadEnd) && gap > rep.ReloadGap {
			rep.ReloadGap = gap
		}
	}
	var latencies []time.Duration
	for _, s := range searches {
		if !s.sent.Before(importStart) && !s.sent.After(reloadEnd) {
			latencies = append(latencies, s.done.Sub(s.sent))
		}
	}
	if len(latencies) > 0 {
		slices.Sort(latencies)
		rep.ReloadP99 = latencies[(len(latencies)*99+99)/100-1] // nearest rank
		rep.ReloadMax = latencies[len(latencies)-1]
	}
}

func printReimportReport(w io.Writer, rep reimportReport) {
	fmt.Fprintf(w, "national supply: %d providers (%s), imported in %.1f s (CPU %.1f s), peak RSS %d MB\n",
		rep.Providers, rep.Engine, rep.ImportSeconds, rep.ImportCPUSeconds, rep.ImportPeakRSSBytes>>20)
	fmt.Fprintf(w, "serve: ready in %.1f s (search index %.2f s), RSS %d MB before the reimport, peak %d MB\n",
		rep.ReadySeconds, rep.WarmupSeconds, rep.ServeRSSBytes>>20, rep.ServePeakRSS>>20)
	fmt.Fprintf(w, "reimport with the %d providers covering the postcode renamed: %.1f s (CPU %.1f s), peak RSS %d MB: %s\n",
		rep.Changed, rep.ReimportSeconds, rep.ReimportCPUSeconds, rep.ReimportPeakRSS>>20, rep.ReimportResult)
	statuses := slices.Sorted(func(yield func(string) bool) {
		for k := range rep.Searches {
			if !yield(k) {
				return
			}
		}
	})
	var parts []string
	for _, s := range statuses {
		parts = append(parts, fmt.Sprintf("%s: %d", s, rep.Searches[s]))
	}
	fmt.Fprintf(w, "searches of %s %s at %d/s: %s\n", rep.Postcode.Code, rep.Postcode.City, rep.Rate, strings.Join(parts, ", "))
	fmt.Fprintf(w, "longest gap between successful searches: %s (ending %s after the import started); during the reload: %s (target <= 1s)\n",
		rep.LongestGap.Round(time.Millisecond), rep.LongestGapEnd.Round(time.Millisecond), rep.ReloadGap.Round(time.Millisecond))
	fmt.Fprintf(w, "search latency from the import's start to the change seen: p99 %s, max %s; serve CPU then %.1f s\n",
		rep.ReloadP99.Round(100*time.Microsecond), rep.ReloadMax.Round(100*time.Microsecond), rep.ServeCPUSeconds)
	if rep.ChangeSeen {
		fmt.Fprintf(w, "change first seen %s after the import started, %s after it ended\n",
			rep.SeenAfterStart.Round(time.Millisecond), rep.SeenAfterEnd.Round(time.Millisecond))
	} else {
		fmt.Fprintln(w, "change NOT seen within 10 minutes of the import")
	}
	fmt.Fprintf(w, "load average: %s at start, %s before the reimport, %s at the end\n",
		rep.Load["start"], rep.Load["before_reimport"], rep.Load["end"])
}

// renameCovering copies the supply file from to to, with the name of every
// provider whose postcodes cover the postcode (five digits as a number)
// given the suffix, and returns the ids of those providers. It reads the
// layout bokat supply generate writes: one "  - id:" line per provider,
// its fields indented by four spaces, postcodes as one flow sequence.
func renameCovering(from, to string, postcode int, suffix string) ([]string, error) {
	in, err := os.Open(from)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	f, err := os.Create(to)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var renamed []string
	var block []string // the lines of the provider being read
	flush := func() error {
		if len(block) > 0 {
			id, covers, err := coversPostcode(block, postcode)
			if err != nil {
				return fmt.Errorf("%s: %w", from, err)
			}
			if covers {
				if block, err = renameBlock(block, suffix); err != nil {
					return fmt.Errorf("%s: provider %s: %w", from, id, err)
				}
				renamed = append(renamed, id)
			}
		}
		for _, line := range block {
			w.WriteString(line)
			w.WriteByte('\n')
		}
		block = block[:0]
		return nil
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  - id: ") || !strings.HasPrefix(line, "    ") {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		block = append(block, line)
	}
	err = sc.Err()
	if err == nil {
		err = flush()
	}
	if err == nil && len(renamed) == 0 {
		err = fmt.Errorf("%s: no provider covers %s", from, bokat.FormatPostcode(postcode))
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return renamed, err
}

// coveredPostcodes reads the supply file at path (the layout
// renameCovering reads) and says, for each of the postcodes (five digits
// as a number), whether a provider covers it.
func coveredPostcodes(path string, postcodes []int) ([]bool, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	covered := make([]bool, len(postcodes))
	id := ""
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "  - id: "); ok {
			id = v
			continue
		}
		if !strings.HasPrefix(line, "    ") { // no longer a provider's field
			id = ""
		}
		if id == "" || !strings.HasPrefix(line, "    postcodes: ") {
			continue
		}
		for i, pc := range postcodes {
			if covered[i] {
				continue
			}
			if _, covered[i], err = coversPostcode([]string{"  - id: " + id, line}, pc); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	return covered, sc.Err()
}

// coversPostcode reads a provider's lines: its id, and whether its
// postcodes cover the postcode. Lines that are no provider cover nothing.
func coversPostcode(block []string, postcode int) (string, bool, error) {
	id, ok := strings.CutPrefix(block[0], "  - id: ")
	if !ok {
		return "", false, nil
	}
	for _, line := range block[1:] {
		list, ok := strings.CutPrefix(line, "    postcodes: ")
		if !ok {
			continue
		}
		for entry := range strings.SplitSeq(strings.Trim(list, "[]"), ",") {
			entry = strings.TrimSpace(entry)
			if u, err := strconv.Unquote(entry); err == nil {
				entry = u
			}
			r, err := supply.ParsePostcodeRange(entry)
			if err != nil {
				return id, false, fmt.Errorf("provider %s: %w", id, err)
			}
			if r.Contains(postcode) {
				return id, true, nil
			}
		}
	}
	return id, false, nil
}

// renameBlock gives the name line of a provider's lines the suffix.
func renameBlock(block []string, suffix string) ([]string, error) {
	for i, line := range block {
		name, ok := strings.CutPrefix(line, "    name: ")
		if !ok {
			continue
		}
		if u, err := strconv.Unquote(name); err == nil {
			name = u
		}
		q, _ := json.Marshal(name + suffix) // a YAML double-quoted scalar
		block[i] = "    name: " + string(q)
		return block, nil
	}
	return nil, errors.New("no name line")
}

// metricValue reads one unlabelled metric from serve's /metrics.
func metricValue(base, name string) (float64, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/metrics has no %s", name)
}

// bokatProgram returns -bokat, or bokat as the go command builds and
// caches it (linked once per change of its code; see gobuild.Cached).
func bokatProgram(ctx context.Context, c config, progress func(string, ...any)) (string, error) {
	if c.bokat != "" {
		return c.bokat, nil
	}
	progress("building bokat …")
	bin, err := gobuild.Cached(ctx, "bokat/cmd/bokat")
	if err != nil {
		return "", fmt.Errorf("build bokat (run inside the module, or pass -bokat): %w", err)
	}
	return bin, nil
}
