package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bokat/internal/supply"
)

// TestProviderCalendarCommands onboards calendars from a supply file and
// manages them with `bokat provider calendar`: addresses never printed,
// production refusing a private address, development admitting it.
func TestProviderCalendarCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "bokat.db")
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
	if _, _, err := cmd("provider", "calendar", "list"); exitCode(err) != 2 {
		t.Errorf("list without a provider: %v, want a usage error", err)
	}
}

// TestServeSyncsProviderCalendars runs the real program with a 1 s sync
// interval in development: a calendar added from the command line while
// serve runs is polled by serve's worker, through --webhook-allow-private,
// and its busy times land in the provider's calendar.
func TestServeSyncsProviderCalendars(t *testing.T) {
	t.Parallel()
	polled := make(chan struct{}, 100)
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/calendar")
		io.WriteString(w, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:e2e@example.se\r\n"+
			"DTSTART:"+time.Now().Add(48*time.Hour).UTC().Format("20060102T150405Z")+"\r\nDURATION:PT2H\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
		polled <- struct{}{}
	}))
	t.Cleanup(feed.Close)
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "bokat.db")
	_, _, logs, stop := startServe(t, []string{"--demo", "--database", dbURL, "--calendar-sync-interval", "1s", "--webhook-allow-private"}, nil)
	defer stop()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"provider", "calendar", "add", "prv_sthlm_vvs_1", feed.URL + "/jobb.ics",
		"--webhook-allow-private", "--database", dbURL}, getenvFrom(nil), &out, io.Discard); err != nil {
		t.Fatalf("add: %v", err)
	}
	select {
	case <-polled:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not poll the calendar within 30 s; logs:\n%s", logs.String())
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out.Reset()
		if err := run(context.Background(), []string{"provider", "calendar", "list", "prv_sthlm_vvs_1", "--database", dbURL},
			getenvFrom(nil), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "busy=1 last_synced=2") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the calendar did not sync within 30 s: %s\nlogs:\n%s", out.String(), logs.String())
		}
	}
	if strings.Contains(logs.String(), "jobb.ics") {
		t.Error("serve logged the calendar's address")
	}
}
