package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat/internal/clocktest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// TestProviderCalendarCommands onboards calendars from a supply file and
// manages them with `bokat provider calendar`: addresses never printed,
// production refusing a private address, development admitting it.
func TestProviderCalendarCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := migratedSQLite(t)
	demo := string(supply.Demo())
	first := strings.Index(demo, "\n  - id: ")
	second := first + 1 + strings.Index(demo[first+1:], "\n  - id: ")
	id := strings.Fields(demo[first+len("\n  - id: "):])[0]
	withCal := demo[:second] + "\n    calendars:\n      - {url: \"http://127.0.0.1:9/hem/secret-token.ics\", rule: all_day_busy}" + demo[second:]
	file := filepath.Join(dir, "supply.yaml")
	if err := os.WriteFile(file, []byte(withCal), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append(args, "--database", dbURL), getenvFrom(nil), &stdout, &stderr)
		return stdout.String(), stderr.String(), err
	}

	// Without the development switch the guard refuses the http address.
	out, errOut, err := cmd("supply", "import", file)
	if err == nil || !strings.Contains(out, "calendars: 0 added, 0 removed, 0 kept, 1 refused") ||
		!strings.Contains(errOut, id+" calendars[0]: url: the URL must use https") || strings.Contains(errOut+out, "secret-token") {
		t.Fatalf("import without --webhook-allow-private: %v\n%s\n%s", err, out, errOut)
	}
	out, _, err = cmd("supply", "import", file, "--webhook-allow-private")
	if err != nil || !strings.Contains(out, "calendars: 1 added, 0 removed, 0 kept, 0 refused\n  "+id+": added cfd_") ||
		!strings.Contains(out, " (127.0.0.1)\n") {
		t.Fatalf("import with --webhook-allow-private: %v\n%s", err, out)
	}
	out, _, err = cmd("supply", "import", file, "--webhook-allow-private")
	if err != nil || !strings.Contains(out, "calendars: 0 added, 0 removed, 1 kept, 0 refused") {
		t.Fatalf("second import: %v\n%s", err, out)
	}

	out, _, err = cmd("provider", "calendar", "add", id, "webcal://127.0.0.1:9/jobb.ics", "--webhook-allow-private")
	if err != nil || !strings.HasSuffix(strings.TrimSpace(out), "127.0.0.1 busy_only (polled within one sync interval of serve)") {
		t.Fatalf("add: %v %q", err, out)
	}
	added := strings.Fields(out)[0]
	if _, _, err := cmd("provider", "calendar", "add", id, "https://127.0.0.1/x.ics"); exitCode(err) != 2 {
		t.Errorf("add of a loopback address without --webhook-allow-private: %v, want a usage error", err)
	}
	if _, _, err := cmd("provider", "calendar", "rule", id, added, "everything"); err != nil {
		t.Fatal(err)
	}
	out, _, err = cmd("provider", "calendar", "list", id)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 2 || !strings.Contains(lines[0], "rule=all_day_busy source=supply busy=0 last_synced=never") ||
		!strings.Contains(lines[1], added+" 127.0.0.1 rule=everything source=operator") || strings.Contains(out, ".ics") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	// The file drops its calendar: the next import ends that subscription
	// (without the sealing key or the development switch: no address is
	// read) and keeps the operator's.
	withoutCal := filepath.Join(dir, "without.yaml")
	if err := os.WriteFile(withoutCal, []byte(demo), 0o600); err != nil {
		t.Fatal(err)
	}
	supplyFeed := strings.Fields(lines[0])[0]
	out, _, err = cmd("supply", "import", withoutCal)
	if err != nil || !strings.Contains(out, "calendars: 0 added, 1 removed, 0 kept, 0 refused\n  "+id+": removed "+supplyFeed+
		" (127.0.0.1); their busy times no longer block; kept "+added+" (127.0.0.1): not added from a supply file\n") {
		t.Fatalf("import of the file without the calendar: %v\n%s", err, out)
	}
	out, _, err = cmd("provider", "calendar", "list", id)
	if err != nil || strings.Contains(out, supplyFeed) || !strings.Contains(out, added) {
		t.Fatalf("list after the calendar left the file: %v\n%s", err, out)
	}
	if _, _, err := cmd("provider", "calendar", "remove", id, added); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cmd("provider", "calendar", "remove", id, added); err == nil || !strings.Contains(err.Error(), "no such provider or calendar") {
		t.Errorf("second remove: %v", err)
	}
	// The file names its calendar again: the import had removed it, so it
	// comes back. Removed by hand, it stays out of the next import.
	if out, _, err = cmd("supply", "import", file, "--webhook-allow-private"); err != nil || !strings.Contains(out, "calendars: 1 added, 0 removed") {
		t.Fatalf("import naming the calendar again: %v\n%s", err, out)
	}
	out, _, err = cmd("provider", "calendar", "list", id)
	if err != nil || !strings.Contains(out, "source=supply") {
		t.Fatalf("list after the calendar came back: %v\n%s", err, out)
	}
	if _, _, err := cmd("provider", "calendar", "remove", id, strings.Fields(out)[0]); err != nil {
		t.Fatal(err)
	}
	out, _, err = cmd("supply", "import", file, "--webhook-allow-private")
	if err != nil || !strings.Contains(out, "calendars: 0 added, 0 removed, 0 kept, 0 refused, 1 left out\n  "+id+
		": left out the calendar(s) on 127.0.0.1: removed from the provider by hand (added again by hand, they count again)\n") || strings.Contains(out, "secret-token") {
		t.Fatalf("import after the calendar was removed by hand: %v\n%s", err, out)
	}
	if out, _, err = cmd("provider", "calendar", "list", id); err != nil || strings.Contains(out, "cfd_") {
		t.Fatalf("list after that import: %v\n%s", err, out)
	}
	// Each of the commands' writes has its provider audit row, by the
	// operator, naming the host and never the address; the imports write
	// none.
	db, err := sqlstore.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, err := db.ProviderAudit(context.Background(), id, 50)
	if err != nil {
		t.Fatal(err)
	}
	var audited []string
	for _, a := range entries {
		if strings.HasPrefix(a.Action, "calendar.") {
			audited = append([]string{a.Actor + " " + a.Action + " " + a.Note}, audited...)
		}
	}
	if want := []string{"operator calendar.added host=127.0.0.1 rule=busy_only", "operator calendar.rule rule=everything",
		"operator calendar.removed ", "operator calendar.removed "}; !slices.Equal(audited, want) {
		t.Errorf("provider audit of the calendar commands:\n%s\nwant\n%s", strings.Join(audited, "\n"), strings.Join(want, "\n"))
	}
	if _, _, err := cmd("provider", "calendar", "list"); exitCode(err) != 2 {
		t.Errorf("list without a provider: %v, want a usage error", err)
	}
}

// TestSupplyImportRefusesCalendarsProductionCannotTake: in production, a
// file naming a calendar is refused with the development switch or without
// the sealing keys, after it was read and before anything of it is
// committed; with the keys it is imported and its calendar applied (the
// guard refusing the loopback address).
func TestSupplyImportRefusesCalendarsProductionCannotTake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := migratedSQLite(t)
	demo := string(supply.Demo())
	second := strings.Index(demo, "\n  - id: ")
	second += 1 + strings.Index(demo[second+1:], "\n  - id: ")
	withCal := demo[:second] + "\n    calendars:\n      - {url: \"https://127.0.0.1/hem/secret-token.ics\"}" + demo[second:]
	file := filepath.Join(dir, "supply.yaml")
	if err := os.WriteFile(file, []byte(withCal), 0o600); err != nil {
		t.Fatal(err)
	}
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	cmd := func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append(args, "--database", dbURL, "--env", "production"), getenvFrom(nil), &stdout, &stderr)
		return stdout.String(), stderr.String(), err
	}
	for _, c := range []struct {
		name, want string
		flags      []string
	}{
		{"the development switch", "--webhook-allow-private is development only and refused in production",
			[]string{"--token-pepper", key, "--secret-key", key, "--webhook-allow-private"}},
		{"no token pepper", "production requires BOKAT_TOKEN_PEPPER", []string{"--secret-key", key}},
		{"no secret key", "production requires BOKAT_SECRET_KEY", []string{"--token-pepper", key}},
	} {
		out, _, err := cmd(append([]string{"supply", "import", file}, c.flags...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(out, "imported") {
			t.Fatalf("import with %s: %v\n%s", c.name, err, out)
		}
	}
	out, errOut, err := cmd("supply", "import", file, "--token-pepper", key, "--secret-key", key)
	providers := strings.Count(demo, "\n  - id: ")
	if err == nil || !strings.Contains(out, fmt.Sprintf(": %d providers: %d created, 0 updated", providers, providers)) ||
		!strings.Contains(out, "calendars: 0 added, 0 removed, 0 kept, 1 refused") || !strings.Contains(errOut, "calendars[0]: url:") ||
		strings.Contains(out+errOut, "secret-token") {
		t.Fatalf("import with the keys (every provider created: nothing of the refused imports was stored): %v\n%s\n%s", err, out, errOut)
	}
}

// TestServeSyncsProviderCalendars runs the real program with a 1 s sync
// interval in development: a calendar added from the command line while
// serve runs is polled by serve's worker, through --webhook-allow-private,
// and its busy times land in the provider's calendar. The worker looks for
// due feeds every calendarTestTick rather than every second, so the test
// does not wait for the next tick in real time.
func TestServeSyncsProviderCalendars(t *testing.T) {
	t.Parallel()
	polled := make(chan struct{}, 100)
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/calendar")
		io.WriteString(w, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:e2e@example.se\r\n"+
			"DTSTART:"+time.Now().Add(48*time.Hour).UTC().Format("20060102T150405Z")+"\r\nDURATION:PT2H\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
		select {
		case polled <- struct{}{}: // the first polls; later ones need no one to hear them
		default:
		}
	}))
	t.Cleanup(feed.Close)
	dbURL := migratedSQLite(t)
	_, _, logs, stop := startServeHooked(t, time.Now, hooks{calendarTick: calendarTestTick},
		[]string{"--demo", "--database", dbURL, "--calendar-sync-interval", "1s", "--webhook-allow-private"}, nil)
	defer stop()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"provider", "calendar", "add", "prv_sthlm_vvs_1", feed.URL + "/jobb.ics",
		"--webhook-allow-private", "--database", dbURL}, getenvFrom(nil), &out, io.Discard); err != nil {
		t.Fatalf("add: %v", err)
	}
	// serve polls beside the test: wait as long as go test allows, so a
	// busy machine is slow here but never fails.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve's logs:\n%s", logs.String())
		}
	})
	clocktest.Receive(t, "serve's first poll of the calendar", polled)
	clocktest.Wait(t, "the calendar's busy time in the list", func() bool {
		out.Reset()
		if err := run(context.Background(), []string{"provider", "calendar", "list", "prv_sthlm_vvs_1", "--database", dbURL},
			getenvFrom(nil), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		return strings.Contains(out.String(), "busy=1 last_synced=2")
	})
	if strings.Contains(logs.String(), "jobb.ics") {
		t.Error("serve logged the calendar's address")
	}
}

// calendarTestTick is how often the calendar worker of a test's serve
// looks for due feeds (the hook calendarTick): the default at the 1 s
// development interval is a second of real time, which a test would only
// wait out. Whether a feed is due is decided on the program's clock, so
// more frequent rounds can only add chances to poll a feed twice.
const calendarTestTick = 50 * time.Millisecond

// TestTwoServesShareCalendarFeeds runs two serve programs (each its own
// store connections, worker and lease token) on one database and one
// injected clock at the 1 s development interval: in each interval every
// feed is polled exactly once, by one of them, however many rounds both
// make. On PostgreSQL, where claims skip each other's locked rows; on
// SQLite too, where the single writer orders them. Their workers make a
// round every calendarTestTick of real time.
func TestTwoServesShareCalendarFeeds(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			const feeds = 12
			var (
				mu   sync.Mutex
				hits = map[string]int{}
			)
			feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hits[r.URL.Path]++
				mu.Unlock()
				io.WriteString(w, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:"+r.URL.Path+"@example.se\r\n"+
					"DTSTART:20990101T100000Z\r\nDTEND:20990101T110000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
			}))
			t.Cleanup(feed.Close)
			total := func() (n int, each []int) {
				mu.Lock()
				defer mu.Unlock()
				for i := range feeds {
					each = append(each, hits[fmt.Sprintf("/f%02d.ics", i)])
					n += each[i]
				}
				return n, each
			}
			dbURL := sqlstoretest.URL(t, engine)
			env := map[string]string{"BOKAT_SECRET_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32)),
				"BOKAT_TOKEN_PEPPER": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{6}, 32))}
			cli := func(args ...string) {
				t.Helper()
				var out, errOut bytes.Buffer
				if err := run(context.Background(), append(args, "--database", dbURL), getenvFrom(env), &out, &errOut); err != nil {
					t.Fatalf("%v: %v\n%s%s", args, err, out.String(), errOut.String())
				}
			}
			file := filepath.Join(t.TempDir(), "demo.yaml")
			if err := os.WriteFile(file, supply.Demo(), 0o600); err != nil {
				t.Fatal(err)
			}
			cli("supply", "import", file)
			for i := range feeds {
				provider := []string{"prv_sthlm_vvs_1", "prv_sthlm_vvs_2", "prv_sthlm_el_1"}[i%3]
				cli("provider", "calendar", "add", provider, fmt.Sprintf("%s/f%02d.ics", feed.URL, i), "--webhook-allow-private")
			}
			// The feeds are due at once on the programs' clock.
			clock := clocktest.New(time.Now().Add(time.Minute))
			args := []string{"--database", dbURL, "--calendar-sync-interval", "1s", "--webhook-allow-private", "--rate-control", "off"}
			var bases []string
			for range 2 {
				base, _, _, _ := startServeHooked(t, clock.Now, hooks{calendarTick: calendarTestTick}, args, env)
				bases = append(bases, base)
			}
			counter := func(base, name string) int {
				for line := range strings.SplitSeq(fetch(t, base+"/metrics").body, "\n") {
					if rest, ok := strings.CutPrefix(line, name+" "); ok {
						n, _ := strconv.ParseFloat(rest, 64)
						return int(n)
					}
				}
				t.Fatalf("%s has no %s", base, name)
				return 0
			}
			for interval := 1; interval <= 3; interval++ {
				clocktest.Wait(t, fmt.Sprintf("interval %d: %d polls", interval, interval*feeds), func() bool {
					n, _ := total()
					return n >= interval*feeds
				})
				// Both programs make two more rounds on the same clock: a
				// feed polled twice in the interval would show now.
				var rounds []int
				for _, b := range bases {
					rounds = append(rounds, counter(b, "bokat_calendar_sync_rounds_total"))
				}
				clocktest.Wait(t, "two more rounds of each program", func() bool {
					for i, b := range bases {
						if counter(b, "bokat_calendar_sync_rounds_total") < rounds[i]+2 {
							return false
						}
					}
					return true
				})
				n, each := total()
				for i, h := range each {
					if h != interval {
						t.Errorf("interval %d: feed %d polled %d times, want %d", interval, i, h, interval)
					}
				}
				polls := 0
				for _, b := range bases {
					polls += counter(b, `bokat_calendar_sync_polls_total{result="changed"}`) + counter(b, `bokat_calendar_sync_polls_total{result="unchanged"}`)
				}
				if n != interval*feeds || polls != n {
					t.Fatalf("interval %d: %d requests, %d polls counted by the programs; want %d", interval, n, polls, interval*feeds)
				}
				clock.Advance(time.Second)
			}
		})
	}
}
