package main

import (
	"os"
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
	for _, args := range [][]string{{}, {"-state", "x", "-duration", "1s"}, {"-state", "x", "-workers", "0"}} {
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
