package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRestartWindowCoversItsFailuresOnly(t *testing.T) {
	from := time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC)
	w := window{From: from, Ready: from.Add(3 * time.Second)}
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{
		{-2 * time.Second, false}, {-500 * time.Millisecond, true}, {time.Second, true},
		{3*time.Second + restartGrace, true}, {3*time.Second + restartGrace + time.Millisecond, false},
	} {
		if got := w.covers(from.Add(c.at)); got != c.want {
			t.Errorf("covers(from%+v) = %v", c.at, got)
		}
	}
}

func TestUnansweredWritesAreTheProxysOwnErrors(t *testing.T) {
	for st, want := range map[int]bool{0: true, 502: true, 503: true, 504: true, 500: false, 409: false, 201: false} {
		if unanswered(st) != want {
			t.Errorf("unanswered(%d) = %v", st, !want)
		}
	}
}

func TestTimeUnitOfStoredInstants(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    int64
		want time.Duration
	}{{now.UnixMilli(), time.Millisecond}, {now.UnixMicro(), time.Microsecond}, {now.UnixNano(), time.Nanosecond}, {now.Unix(), time.Second}} {
		if got := timeUnit(c.v); got != c.want {
			t.Errorf("timeUnit(%d) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestConfigRefusesNonsense(t *testing.T) {
	for _, args := range [][]string{{}, {"-state", "x", "-duration", "1s"}, {"-state", "x", "-workers", "0"}, {"-state", "x", "-sample", "0s"}} {
		if _, err := parseConfig(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	c, err := parseConfig([]string{"-state", "x", "-duration", "30m"})
	if err != nil || c.duration != 30*time.Minute || c.restart != "a" {
		t.Errorf("%+v %v", c, err)
	}
}

func TestParseSeriesReadsUnlabelledValues(t *testing.T) {
	exposition := `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_gc_duration_seconds{quantile="0"} 1.9704e-05
go_goroutines 57
go_goroutines_other 3
go_memstats_heap_inuse_bytes 3.2382976e+07
go_threads 11
`
	got := parseSeries(strings.NewReader(exposition), "go_goroutines", "go_memstats_heap_inuse_bytes", "go_gc_duration_seconds", "absent")
	if len(got) != 2 || got["go_goroutines"] != 57 || got["go_memstats_heap_inuse_bytes"] != 32382976 {
		t.Errorf("parseSeries = %v", got)
	}
}

func TestProcStatusReadsMemoryFields(t *testing.T) {
	m := procStatus(os.Getpid(), "VmRSS", "RssAnon", "VmHWM", "NoSuchField")
	if m["VmRSS"] <= 0 || m["RssAnon"] <= 0 || m["RssAnon"] > m["VmRSS"] || m["VmHWM"] < m["VmRSS"] || m["NoSuchField"] != -1 {
		t.Errorf("procStatus = %v", m)
	}
	if m := procStatus(-1, "VmRSS"); m["VmRSS"] != -1 {
		t.Errorf("procStatus of no process = %v", m)
	}
}

func TestSummariseSplitsEachInstanceIntoParts(t *testing.T) {
	var samples []sample
	// Instance a: restarted after 5 minutes (a new pid), RSS rising; b:
	// flat RSS, heap swinging between collections, one unreadable sample.
	for i := range 10 {
		at := time.Duration(i) * time.Minute
		pid := 100
		if i >= 5 {
			pid = 200
		}
		samples = append(samples,
			sample{Offset: at, Instance: "a", PID: pid, RSSKiB: int64(1000 + 100*i), AnonKiB: int64(500 + 100*i), HeapKiB: int64(300 + 10*i), Goroutines: 20 + i},
			sample{Offset: at, Instance: "b", PID: 300, RSSKiB: 2048, AnonKiB: 1024, HeapKiB: int64(400 + 100*(i%3)), Goroutines: 30})
	}
	samples = append(samples, sample{Offset: 10 * time.Minute, Instance: "b", PID: 300, RSSKiB: -1, AnonKiB: -1, HeapKiB: -1, Goroutines: -1})
	got := summarise(samples, 10*time.Minute, 2)
	if len(got) != 4 {
		t.Fatalf("summarise = %+v, want 2 instances × 2 parts", got)
	}
	a1, a2, b1, b2 := got[0], got[1], got[2], got[3]
	if a1.Instance != "a" || a1.From != "0" || a1.To != "5" || a1.Samples != 5 || !slices.Equal(a1.PIDs, []int{100}) ||
		a1.RSSMedianKiB != 1200 || a1.RSSMaxKiB != 1400 || a1.AnonMedianKiB != 700 || a1.HeapLeastKiB != 300 || a1.Goroutines != 22 {
		t.Errorf("a's first part = %+v", a1)
	}
	if a2.From != "5" || a2.To != "10" || a2.Samples != 5 || !slices.Equal(a2.PIDs, []int{200}) || a2.RSSMedianKiB != 1700 || a2.HeapLeastKiB != 350 {
		t.Errorf("a's second part = %+v", a2)
	}
	// The sample at the very end belongs to the last part; its unreadable
	// figures are left out.
	if b1.Instance != "b" || b1.RSSMedianKiB != 2048 || b1.HeapLeastKiB != 400 || b2.Samples != 6 || b2.RSSMedianKiB != 2048 ||
		b2.RSSMaxKiB != 2048 || b2.HeapLeastKiB != 400 || b2.Goroutines != 30 {
		t.Errorf("b = %+v %+v", b1, b2)
	}
	var buf strings.Builder
	if err := writeSamplesCSV(&buf, samples[:2]); err != nil {
		t.Fatal(err)
	}
	if want := "offset_s,instance,pid,rss_kib,rss_anon_kib,heap_alloc_kib,goroutines\n0,a,100,1000,500,300,20\n0,b,300,2048,1024,400,30\n"; buf.String() != want {
		t.Errorf("CSV = %q, want %q", buf.String(), want)
	}
	printMemory(&buf, got)
	if !strings.Contains(buf.String(), "a         0–5         100") {
		t.Errorf("printed:\n%s", buf.String())
	}
}

func TestObserveGivesMinusOneForWhatItCannotRead(t *testing.T) {
	in := instance{Name: "x", PIDFile: filepath.Join(t.TempDir(), "none.pid"), Metrics: "127.0.0.1:1"}
	pid, status, series := observe(in, []string{"VmRSS"}, "go_goroutines")
	if pid != 0 || status["VmRSS"] != -1 || series["go_goroutines"] != -1 || kib(series["go_goroutines"]) != -1 || kib(2048) != 2 {
		t.Errorf("observe = %d %v %v", pid, status, series)
	}
}
