package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/supply"
)

// scaleReport is the outcome of scale mode (-large).
type scaleReport struct {
	Providers      int           `json:"providers"`
	ImportSeconds  float64       `json:"large_import_seconds"`
	Runs           []measurement `json:"runs"`
	DemoMax        float64       `json:"demo_max_rps"`
	LargeMax       float64       `json:"large_max_rps"`
	Ratio          float64       `json:"ratio"`
	HalfLoadTarget float64       `json:"half_load_rps"`
	HalfLoadP99    time.Duration `json:"half_load_p99_ns"`
	PeakRSSBytes   int64         `json:"peak_rss_bytes"`
	TargetsMet     bool          `json:"targets_met"`
}

// largeSupply generates the large supply: c.large providers covering
// 111 00–118 99 (the searched 113 45 included), every seeded service, 40
// one-hour blocked periods each over the 14 days from today.
func largeSupply(providers int) ([]byte, error) {
	cat, err := catalog.Load()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = supply.Generate(&buf, cat, supply.GenerateOptions{Providers: providers, Seed: 1,
		From: schedule.DateOf(time.Now()), BusyHours: 40})
	return buf.Bytes(), err
}

func runScale(ctx context.Context, c config, out io.Writer) error {
	demo, err := startServer(ctx, serverSpec{Kind: "search", Database: c.database, SupplyName: supply.DemoName},
		supply.Demo(), c.inProcess)
	if err != nil {
		return fmt.Errorf("demo server: %w", err)
	}
	defer demo.Close()
	file, err := largeSupply(c.large)
	if err != nil {
		return err
	}
	started := time.Now()
	large, err := startServer(ctx, serverSpec{Kind: "search", Database: c.largeDatabase, SupplyName: "generated.yaml",
		CPUProfile: absPath(c.profile, c.inProcess), HeapProfile: absPath(c.heap, c.inProcess)}, file, c.inProcess)
	if err != nil {
		return fmt.Errorf("large server: %w", err)
	}
	defer large.Close()
	rep := scaleReport{Providers: c.large, ImportSeconds: time.Since(started).Seconds()}

	cmp, err := compare(ctx, c, demo, "demo", subject{srv: large, name: "large", target: 0.5})
	if err != nil {
		return err
	}
	o := cmp.subjects[0]
	rep.Runs, rep.DemoMax, rep.LargeMax, rep.Ratio = cmp.runs, cmp.refMax, o.max, o.ratio
	rep.HalfLoadTarget, rep.HalfLoadP99, rep.TargetsMet = o.halfTarget, o.halfP99, cmp.met
	rep.PeakRSSBytes, _ = large.PeakRSS()

	return emit(out, c, rep, rep.TargetsMet, "large/demo ratio >= 0.50 and p99 < 10ms at half load", func() { printScaleReport(out, rep, c) })
}

func printScaleReport(w io.Writer, rep scaleReport, c config) {
	fmt.Fprintf(w, "large supply: %d providers covering 113 45, 40 busy hours each (imported and served in %.1fs)\n",
		rep.Providers, rep.ImportSeconds)
	fmt.Fprintf(w, "%d workers; %s per attack\n\n", c.workers, c.duration)
	printRuns(w, rep.Runs, 1)
	verdict := "met"
	if !rep.TargetsMet {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "\nlarge %.1f req/s / demo %.1f req/s = ratio %.3f (target >= 0.50)\n", rep.LargeMax, rep.DemoMax, rep.Ratio)
	fmt.Fprintf(w, "large p99 at %.2f req/s (half its maximum): %s (target < 10ms)\n",
		rep.HalfLoadTarget, rep.HalfLoadP99.Round(10*time.Microsecond))
	if rep.PeakRSSBytes > 0 {
		what := "the large server's process"
		if c.inProcess {
			what = "this process (both servers and the load generator)"
		}
		fmt.Fprintf(w, "peak RSS of %s: %.0f MB\n", what, float64(rep.PeakRSSBytes)/(1<<20))
	}
	fmt.Fprintf(w, "targets %s\n", verdict)
}

// peakRSS returns a process's peak resident set size (VmHWM of its
// /proc/PID/status file at path), or an error where /proc is missing.
func peakRSS(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: VmHWM %q: %w", path, rest, err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no VmHWM", path)
}
