package calsync_test

import (
	"errors"
	"strings"
	"testing"

	"bokat/internal/calsync"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// FuzzParse feeds arbitrary bytes to the feed parser: it must return busy
// times inside the window, sorted and disjoint, or an error, and never
// panic or run away.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"google.ics", "outlook.ics", "icloud.ics"} {
		f.Add(readFeed(f, name))
	}
	f.Add([]byte(hostileRecurrence))
	f.Add([]byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20261101\r\nRDATE;VALUE=PERIOD:20261102T100000Z/PT1H\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := calsync.Parse(body, calsync.ParseOptions{From: windowFrom, To: windowTo, MaxBusy: 500, DayBudget: 5000})
		if err != nil {
			if !errors.Is(err, calsync.ErrMalformed) && !errors.Is(err, calsync.ErrTooManyBusy) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrTooManyBusy", err)
			}
			return
		}
		for i, x := range got.Busy {
			if !x.Start.Before(x.End) || !x.End.After(windowFrom) || !x.Start.Before(windowTo) {
				t.Fatalf("busy %v–%v is empty or outside the window", x.Start, x.End)
			}
			if i > 0 && !got.Busy[i-1].End.Before(x.Start) {
				t.Fatalf("busy times %d and %d overlap or touch", i-1, i)
			}
		}
	})
}

// hostileRecurrence holds rules that make a naive expander run away: a
// rule no day satisfies, a rule from the year 1 with a huge COUNT, an
// hourly rule whose BYHOUR the interval never reaches, a secondly rule.
const hostileRecurrence = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" +
	"BEGIN:VEVENT\r\nUID:a@x\r\nDTSTART:20260101T100000Z\r\nDTEND:20260101T110000Z\r\nRRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:b@x\r\nDTSTART:00010101T100000Z\r\nDTEND:00010101T110000Z\r\nRRULE:FREQ=DAILY;COUNT=999999999\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:c@x\r\nDTSTART:20260101T040000Z\r\nDTEND:20260101T050000Z\r\nRRULE:FREQ=HOURLY;INTERVAL=24;BYHOUR=5\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:d@x\r\nDTSTART:20260101T040000Z\r\nDTEND:20260101T040001Z\r\nRRULE:FREQ=SECONDLY\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:e@x\r\nDTSTART:20261021T100000Z\r\nDTEND:20261021T110000Z\r\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// TestHostileFeedsCostBoundedTime parses feeds built to exhaust a parser:
// each must end (with busy times or an error) within the limits.
func TestHostileFeedsCostBoundedTime(t *testing.T) {
	t.Parallel()
	nested := "BEGIN:VCALENDAR\r\n" + strings.Repeat("BEGIN:X\r\n", 100000) + strings.Repeat("END:X\r\n", 100000) + "END:VCALENDAR\r\n"
	manyEvents := "BEGIN:VCALENDAR\r\n" + strings.Repeat("BEGIN:VEVENT\r\nUID:m@x\r\nDTSTART:20261021T100000Z\r\nDTEND:20261021T110000Z\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\n", 2000) + "END:VCALENDAR\r\n"
	cases := []struct {
		name    string
		body    string
		wantErr error
		check   func(t *testing.T, p calsync.Parsed)
	}{
		{"deeply nested", nested, calsync.ErrMalformed, nil},
		{"endless and impossible rules", hostileRecurrence, nil, func(t *testing.T, p calsync.Parsed) {
			// b (COUNT from the year 1) spends the feed's day budget, so e
			// after it is not expanded; c and d are rules this package
			// does not expand: each is partial and blocks what it could.
			if p.Partial != 4 {
				t.Errorf("partial = %d, want 4", p.Partial)
			}
		}},
		{"more busy times than the cap", manyEvents, calsync.ErrTooManyBusy, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := calsync.Parse([]byte(tc.body), calsync.ParseOptions{From: windowFrom, To: windowTo})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
}

// TestHostileFeedsInARound polls hostile feeds beside a real one in one
// round through the worker: the nested one and the one with too many busy
// times fail, the endless rules block what they can, the real one syncs,
// and the round ends.
func TestHostileFeedsInARound(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	e := newSyncEnv(t, db)
	e.server.set("/nested.ics", []byte("BEGIN:VCALENDAR\r\n"+strings.Repeat("BEGIN:X\r\n", 10000)+strings.Repeat("END:X\r\n", 10000)+"END:VCALENDAR\r\n"))
	e.server.set("/endless.ics", []byte(hostileRecurrence))
	e.server.set("/many.ics", []byte("BEGIN:VCALENDAR\r\n"+strings.Repeat("BEGIN:VEVENT\r\nUID:m@x\r\nDTSTART:20261021T100000Z\r\n"+
		"DTEND:20261021T110000Z\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\n", 800)+"END:VCALENDAR\r\n"))
	e.server.set("/ok.ics", readFeed(t, "outlook.ics"))
	feeds := map[string]calsync.Feed{}
	for _, p := range []string{"/nested.ics", "/endless.ics", "/many.ics", "/ok.ics"} {
		feeds[p] = e.add(t, p, "")
	}
	if r := e.round(t); r.Polled != 4 || r.Changed != 2 || r.Failed != 2 {
		t.Fatalf("round = %+v, want 4 polled: 2 synced, 2 failed", r)
	}
	for p, want := range map[string]string{"/nested.ics": "not a valid iCalendar", "/many.ics": "too many busy times", "/ok.ics": "", "/endless.ics": ""} {
		if got := e.feed(t, feeds[p].ID).LastError; want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%s: last error %q, want %q", p, got, want)
		}
	}
}
