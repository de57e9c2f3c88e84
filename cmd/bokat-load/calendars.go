package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"bokat/internal/calsync/calsynctest"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/supply"
)

// Calendar mode (-calendars N) measures calendar sync at scale with the
// real program: it builds bokat (or takes -bokat), imports a generated
// supply of N providers (as -large does: covering 113 45, 40 one-hour
// blocked periods each), starts `bokat serve` on it, then imports the same
// supply again with one calendar per provider (bokat supply generate
// --calendar-url), each a generated feed of 200 events (calsynctest.Feed)
// served by a real HTTP server in this process. It reads serve's CPU time
// (user+sys, /proc/PID/stat) and its counters (/metrics) around each round:
//
//  1. every feed new: fetched, parsed, its busy times written;
//  2. every feed answered 304 Not Modified;
//  3. every feed answered 200 with the same body and no validators (a
//     server without conditional requests);
//  4. validators again, and one provider's feed gets a busy time over the
//     first option a search offers: once the feed server has answered it,
//     the tool searches every 50 ms until that option is gone.
//
// It reports each round's CPU time, polls and calendar rows written, the
// change-to-search delay, serve's peak RSS (VmHWM) and the machine's load
// average at each step.

// calendarReport is the outcome of calendar mode.
type calendarReport struct {
	Providers     int               `json:"providers"`
	Interval      time.Duration     `json:"interval_ns"`
	FeedBytes     int               `json:"feed_bytes"`
	ImportSeconds float64           `json:"supply_import_seconds"`
	SubscribeSecs float64           `json:"calendar_import_seconds"`
	Rounds        []calendarRound   `json:"rounds"`
	Change        *calendarChange   `json:"change,omitempty"`
	StartRSSBytes int64             `json:"rss_before_sync_bytes"`
	PeakRSSBytes  int64             `json:"peak_rss_bytes"`
	Load          map[string]string `json:"load_average"`
}

type calendarRound struct {
	Name      string  `json:"name"`
	CPU       float64 `json:"cpu_seconds"`
	Wall      float64 `json:"wall_seconds"`
	Changed   int     `json:"changed"`
	Unchanged int     `json:"unchanged"`
	Failed    int     `json:"failed"`
	Rows      int     `json:"rows"`
	RSS       int64   `json:"rss_at_end_bytes"`
	PeakRSS   int64   `json:"peak_rss_at_end_bytes"`
	Load      string  `json:"load_at_end"`
}

type calendarChange struct {
	Provider string `json:"provider"`
	// SincePoll is from the feed server answering the changed feed to the
	// first search without the option; SinceChange from the change.
	SincePoll   time.Duration `json:"since_poll_ns"`
	SinceChange time.Duration `json:"since_change_ns"`
}

func runCalendars(ctx context.Context, c config, out io.Writer) error {
	dir, err := os.MkdirTemp("", "bokat-load-calendars-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := bokatProgram(ctx, c, func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) })
	if err != nil {
		return err
	}
	now := time.Now()
	feeds := calsynctest.NewServer(now)
	feedLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	feedSrv := &http.Server{Handler: feeds, ReadHeaderTimeout: 10 * time.Second}
	go feedSrv.Serve(feedLn)
	defer feedSrv.Close()

	cat, err := catalog.Load()
	if err != nil {
		return err
	}
	opts := supply.GenerateOptions{Providers: c.calendars, Seed: 1, From: schedule.DateOf(now), BusyHours: 40}
	plain, withCal := filepath.Join(dir, "supply.yaml"), filepath.Join(dir, "supply-calendars.yaml")
	for _, f := range []struct {
		path, url string
	}{{plain, ""}, {withCal, "http://" + feedLn.Addr().String() + "/feeds/{id}.ics"}} {
		var buf bytes.Buffer
		opts.CalendarURL = f.url
		if err := supply.Generate(&buf, cat, opts); err != nil {
			return err
		}
		if err := os.WriteFile(f.path, buf.Bytes(), 0o600); err != nil {
			return err
		}
	}
	db := c.database
	if db == "" {
		db = "sqlite:" + filepath.Join(dir, "bokat.db")
	}
	rep := calendarReport{Providers: c.calendars, Interval: c.interval, FeedBytes: len(calsynctest.Feed(1, now, 0)),
		Load: map[string]string{}}
	bokat := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, bin, append(args, "--database", db)...)
		cmd.Env = append(os.Environ(), "BOKAT_MAIL_DIR="+filepath.Join(dir, "mail"))
		return cmd.CombinedOutput()
	}
	started := time.Now()
	if b, err := bokat("supply", "import", plain); err != nil {
		return fmt.Errorf("supply import: %v\n%s", err, b)
	}
	rep.ImportSeconds = time.Since(started).Seconds()

	addr, err := freeLocalAddr()
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	serve := exec.Command(bin, "serve", "--database", db, "--addr", addr, "--webhook-allow-private",
		"--calendar-sync-interval", c.interval.String(), "--rate-search", "off", "--rate-reads", "off", "--rate-control", "off",
		"--log-level", "warn", "--mail-dir", filepath.Join(dir, "mail"))
	serve.Stdout, serve.Stderr = logFile, logFile
	if err := serve.Start(); err != nil {
		return err
	}
	defer func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		_ = serve.Wait()
	}()
	base := "http://" + addr
	pid := serve.Process.Pid
	if err := waitFor(ctx, 5*time.Minute, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		return fmt.Errorf("serve did not get ready: %w (log in %s)", err, logFile.Name())
	}
	if _, err := searchOptions(base); err != nil { // the index is built
		return err
	}
	rep.StartRSSBytes, _ = procStatus(pid, "VmRSS:")
	startHWM, _ := procStatus(pid, "VmHWM:")
	fmt.Fprintf(out, "serve started and searched: RSS %d MB, peak %d MB\n", rep.StartRSSBytes>>20, startHWM>>20)

	cpu0, err := procCPU(pid)
	if err != nil {
		return err
	}
	m0, err := syncMetrics(base)
	if err != nil {
		return err
	}
	rep.Load["before"] = loadAvg()
	started = time.Now()
	if b, err := bokat("supply", "import", withCal, "--webhook-allow-private"); err != nil {
		return fmt.Errorf("supply import with calendars: %v\n%s", err, b)
	}
	rep.SubscribeSecs = time.Since(started).Seconds()
	fmt.Fprintf(out, "%d providers imported in %.1f s, their calendars subscribed in %.1f s; serve RSS %d MB before the sync\n",
		c.calendars, rep.ImportSeconds, rep.SubscribeSecs, rep.StartRSSBytes>>20)

	n := c.calendars
	round := func(name string, polls int, during func(stop <-chan struct{})) error {
		begin, cpuBegin, mBegin := time.Now(), cpu0, m0
		stop := make(chan struct{})
		done := make(chan struct{})
		if during != nil {
			go func() { defer close(done); during(stop) }()
		} else {
			close(done)
		}
		var m syncCounters
		err := waitFor(ctx, 4*c.interval+time.Hour, func() bool {
			m, err = syncMetrics(base)
			return err == nil && m.polls()-m0.polls() >= polls
		})
		close(stop)
		<-done
		if err != nil {
			return fmt.Errorf("round %s: %w (log in %s)", name, err, logFile.Name())
		}
		cpu, err := procCPU(pid)
		if err != nil {
			return err
		}
		rss, _ := procStatus(pid, "VmRSS:")
		hwm, _ := procStatus(pid, "VmHWM:")
		r := calendarRound{PeakRSS: hwm, Name: name, CPU: (cpu - cpuBegin).Seconds(), Wall: time.Since(begin).Seconds(),
			Changed: int(m.changed - mBegin.changed), Unchanged: int(m.unchanged - mBegin.unchanged),
			Failed: int(m.failed - mBegin.failed), Rows: int(m.rows - mBegin.rows), RSS: rss, Load: loadAvg()}
		rep.Rounds = append(rep.Rounds, r)
		fmt.Fprintf(out, "round %-28s cpu %7.1f s  wall %6.1f s  changed %5d unchanged %5d failed %d  rows %7d (%.2f/poll)  rss %d MB (peak so far %d MB)  load %s\n",
			r.Name, r.CPU, r.Wall, r.Changed, r.Unchanged, r.Failed, r.Rows, float64(r.Rows)/float64(max(polls, 1)), r.RSS>>20, r.PeakRSS>>20, r.Load)
		cpu0, m0 = cpu, m
		return nil
	}
	// The CPU time of round 1 runs from before the calendars were
	// subscribed (the import is a process of its own) to its last poll;
	// rounds 2 and 3 each include the idle wait for the next interval.
	if err := round("1 new feeds", n, nil); err != nil {
		return err
	}
	if err := round("2 answered 304", n, nil); err != nil {
		return err
	}
	feeds.SetValidators(false)
	if err := round("3 same body, no validators", n, nil); err != nil {
		return err
	}
	feeds.SetValidators(true)
	// Then one feed changes: a busy time over the first option a search
	// offers. The searches run after the rounds, so no round's CPU time
	// holds them.
	var change calendarChange
	err = round("4 one feed changed", n, func(stop <-chan struct{}) {
		opts, err := searchOptions(base)
		if err != nil || len(opts) == 0 {
			fmt.Fprintf(out, "change: no option to change (%v)\n", err)
			return
		}
		first := opts[0]
		num, err := calsynctest.FeedNumber(first.Provider.ID)
		if err != nil {
			fmt.Fprintf(out, "change: provider %s has no generated feed\n", first.Provider.ID)
			return
		}
		feeds.AddBusy(num, first.Slot.StartAt, first.Slot.EndAt)
		changed, wait := time.Now(), 500*time.Millisecond
		for {
			select {
			case <-stop:
				fmt.Fprintln(out, "change: the round ended before a search reflected the change")
				return
			case <-time.After(wait):
			}
			if _, ok := feeds.ServedChanged(num); !ok {
				continue // not polled yet: no search needed
			}
			wait = 50 * time.Millisecond
			got, err := searchOptions(base)
			if err != nil {
				continue
			}
			offered := false
			for _, o := range got {
				if o.Provider.ID == first.Provider.ID && o.Slot.StartAt.Before(first.Slot.EndAt) && first.Slot.StartAt.Before(o.Slot.EndAt) {
					offered = true
				}
			}
			if !offered {
				served, _ := feeds.ServedChanged(num)
				change = calendarChange{Provider: first.Provider.ID, SincePoll: time.Since(served), SinceChange: time.Since(changed)}
				return
			}
		}
	})
	if err != nil {
		return err
	}
	if change.Provider != "" {
		rep.Change = &change
		fmt.Fprintf(out, "change of %s's feed: gone from search %s after the poll that read it, %s after the change (interval %s)\n",
			change.Provider, change.SincePoll.Round(time.Millisecond), change.SinceChange.Round(time.Second), c.interval)
	}
	rep.PeakRSSBytes, err = procStatus(pid, "VmHWM:")
	if err != nil {
		return err
	}
	rep.Load["after"] = loadAvg()
	fmt.Fprintf(out, "serve peak RSS %d MB (target < 300 MB); feeds served: %d bodies (%d MB), %d not modified; load %s\n",
		rep.PeakRSSBytes>>20, feeds.OK.Load(), feeds.Bytes.Load()>>20, feeds.NotModified.Load(), loadAvg())
	if c.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return nil
}

// syncCounters are serve's calendar sync counters.
type syncCounters struct{ changed, unchanged, failed, rows float64 }

func (s syncCounters) polls() int { return int(s.changed + s.unchanged + s.failed) }

// syncMetrics reads the calendar sync counters from serve's /metrics.
func syncMetrics(base string) (syncCounters, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return syncCounters{}, err
	}
	defer resp.Body.Close()
	var s syncCounters
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case `bokat_calendar_sync_polls_total{result="changed"}`:
			s.changed = v
		case `bokat_calendar_sync_polls_total{result="unchanged"}`:
			s.unchanged = v
		case `bokat_calendar_sync_polls_total{result="failed"}`:
			s.failed = v
		case "bokat_calendar_sync_rows_total":
			s.rows = v
		}
	}
	return s, sc.Err()
}

type searchOption struct {
	Provider struct {
		ID string `json:"id"`
	} `json:"provider"`
	Slot struct {
		StartAt time.Time `json:"start_at"`
		EndAt   time.Time `json:"end_at"`
	} `json:"slot"`
}

// searchOptions runs the load's search against serve.
func searchOptions(base string) ([]searchOption, error) {
	resp, err := http.Post(base+"/v1/booking-options", "application/json", strings.NewReader(searchBody))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Options []searchOption `json:"options"`
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return nil, fmt.Errorf("search: %d %s", resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	return body.Options, nil
}

// procCPU returns a process's user+system CPU time from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) start at ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("unexpected /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks, nil
}

// procStatus returns a kB field of /proc/PID/status, in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func freeLocalAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitFor polls cond every 500 ms until it holds or limit passes.
func waitFor(ctx context.Context, limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("still waiting after %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return nil
}
