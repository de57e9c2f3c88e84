package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// sample is one instance's memory and goroutines at a moment of the load,
// taken every -sample: three snapshots cannot tell a trend from where a
// sample happened to land between two collections.
type sample struct {
	Offset     time.Duration `json:"offset_ns"`
	Instance   string        `json:"instance"`
	PID        int           `json:"pid"`
	RSSKiB     int64         `json:"rss_kib"`
	AnonKiB    int64         `json:"rss_anon_kib"`
	HeapKiB    int64         `json:"heap_alloc_kib"` // go_memstats_heap_alloc_bytes: live data and garbage not yet swept
	Goroutines int           `json:"goroutines"`
}

// memoryWindow sums up an instance's samples in one part of the run. The
// least Go heap of a part's samples is about its live data: samples land
// at every point of the collector's cycle, and just after a collection the
// heap holds little more than what is live.
type memoryWindow struct {
	Instance      string `json:"instance"`
	From          string `json:"from"` // offsets into the load, in minutes
	To            string `json:"to"`
	PIDs          []int  `json:"pids"`
	Samples       int    `json:"samples"`
	RSSMedianKiB  int64  `json:"rss_median_kib"`
	RSSMaxKiB     int64  `json:"rss_max_kib"`
	AnonMedianKiB int64  `json:"rss_anon_median_kib"`
	HeapLeastKiB  int64  `json:"heap_least_kib"`
	Goroutines    int    `json:"goroutines_median"`
}

// sampleMemory takes one sample of each instance.
func (s *soak) sampleMemory(offset time.Duration) {
	for _, in := range s.d.Instances {
		pid, status, series := observe(in, []string{"VmRSS", "RssAnon"}, "go_goroutines", "go_memstats_heap_alloc_bytes")
		sm := sample{Offset: offset, Instance: in.Name, PID: pid, RSSKiB: status["VmRSS"], AnonKiB: status["RssAnon"],
			HeapKiB: kib(series["go_memstats_heap_alloc_bytes"]), Goroutines: int(series["go_goroutines"])}
		s.mu.Lock()
		s.samples = append(s.samples, sm)
		s.mu.Unlock()
	}
}

// summarise splits the run (of length d) into parts of equal length and
// sums up each instance's samples in each part, instance by instance in the
// order first seen, parts in time order. Samples that could not be read
// (-1) are left out of a part's figures.
func summarise(samples []sample, d time.Duration, parts int) []memoryWindow {
	if parts < 1 || d <= 0 {
		return nil
	}
	var names []string
	for _, sm := range samples {
		if !slices.Contains(names, sm.Instance) {
			names = append(names, sm.Instance)
		}
	}
	minutes := func(t time.Duration) string { return strconv.FormatFloat(t.Minutes(), 'f', -1, 64) }
	var out []memoryWindow
	for _, name := range names {
		for i := range parts {
			from, to := d*time.Duration(i)/time.Duration(parts), d*time.Duration(i+1)/time.Duration(parts)
			w := memoryWindow{Instance: name, From: minutes(from), To: minutes(to), HeapLeastKiB: -1}
			var rss, anon, gor []int64
			for _, sm := range samples {
				last := i == parts-1 && sm.Offset >= to
				if sm.Instance != name || sm.Offset < from || (sm.Offset >= to && !last) {
					continue
				}
				w.Samples++
				if sm.PID != 0 && !slices.Contains(w.PIDs, sm.PID) {
					w.PIDs = append(w.PIDs, sm.PID)
				}
				if sm.RSSKiB >= 0 {
					rss = append(rss, sm.RSSKiB)
					w.RSSMaxKiB = max(w.RSSMaxKiB, sm.RSSKiB)
				}
				if sm.AnonKiB >= 0 {
					anon = append(anon, sm.AnonKiB)
				}
				if sm.HeapKiB >= 0 && (w.HeapLeastKiB < 0 || sm.HeapKiB < w.HeapLeastKiB) {
					w.HeapLeastKiB = sm.HeapKiB
				}
				if sm.Goroutines >= 0 {
					gor = append(gor, int64(sm.Goroutines))
				}
			}
			w.RSSMedianKiB, w.AnonMedianKiB, w.Goroutines = median(rss), median(anon), int(median(gor))
			out = append(out, w)
		}
	}
	return out
}

// median is the middle value of vs (the lower of the two middle ones), or
// -1 for none.
func median(vs []int64) int64 {
	if len(vs) == 0 {
		return -1
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return vs[(len(vs)-1)/2]
}

// writeSamples writes every sample as CSV to STATE/memory.csv.
func (s *soak) writeSamples(samples []sample) error {
	f, err := os.Create(filepath.Join(s.c.state, "memory.csv"))
	if err != nil {
		return err
	}
	if err := writeSamplesCSV(f, samples); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeSamplesCSV(w io.Writer, samples []sample) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"offset_s", "instance", "pid", "rss_kib", "rss_anon_kib", "heap_alloc_kib", "goroutines"})
	for _, sm := range samples {
		_ = cw.Write([]string{strconv.FormatFloat(sm.Offset.Seconds(), 'f', 0, 64), sm.Instance, strconv.Itoa(sm.PID),
			strconv.FormatInt(sm.RSSKiB, 10), strconv.FormatInt(sm.AnonKiB, 10), strconv.FormatInt(sm.HeapKiB, 10),
			strconv.Itoa(sm.Goroutines)})
	}
	cw.Flush()
	return cw.Error()
}

// printMemory writes the report's memory over the run.
func printMemory(w io.Writer, windows []memoryWindow) {
	if len(windows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nmemory over the load (a sample of each instance every -sample; Go heap: the least of the part's samples)\n")
	fmt.Fprintf(w, "%-9s %-11s %-13s %7s %15s %12s %16s %12s %11s\n", "instance", "minutes", "pids", "samples", "RSS median MiB",
		"RSS max MiB", "anon median MiB", "Go heap MiB", "goroutines")
	mib := func(kib int64) string {
		if kib < 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(kib)/1024, 'f', 1, 64)
	}
	for _, m := range windows {
		pids := ""
		for i, p := range m.PIDs {
			if i > 0 {
				pids += ","
			}
			pids += strconv.Itoa(p)
		}
		fmt.Fprintf(w, "%-9s %-11s %-13s %7d %15s %12s %16s %12s %11d\n", m.Instance, m.From+"–"+m.To, pids, m.Samples,
			mib(m.RSSMedianKiB), mib(m.RSSMaxKiB), mib(m.AnonMedianKiB), mib(m.HeapLeastKiB), m.Goroutines)
	}
}

// sampleLoop samples the instances every interval until ctx ends.
func (s *soak) sampleLoop(ctx context.Context, start time.Time, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.sampleMemory(time.Since(start))
		}
	}
}
