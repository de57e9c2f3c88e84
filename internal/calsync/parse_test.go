package calsync_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bokat/internal/calsync"
)

// window is the horizon the feed tests read: 30 days from a Tuesday in
// October 2026, across the end of summer time (25 October).
var (
	windowFrom = time.Date(2026, 10, 20, 8, 0, 0, 0, time.UTC)
	windowTo   = windowFrom.Add(30 * 24 * time.Hour)
)

func readFeed(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func iv(start, end string) calsync.Interval {
	s, err := time.Parse(time.RFC3339, start)
	if err != nil {
		panic(err)
	}
	e, err := time.Parse(time.RFC3339, end)
	if err != nil {
		panic(err)
	}
	return calsync.Interval{Start: s, End: e}
}

func formatBusy(busy []calsync.Interval) string {
	var b strings.Builder
	for _, x := range busy {
		b.WriteString(x.Start.UTC().Format(time.RFC3339) + "–" + x.End.UTC().Format(time.RFC3339) + "\n")
	}
	return b.String()
}

// Busy times expected of the feeds in testdata over the window.
var (
	googleBusy = []calsync.Interval{
		iv("2026-10-20T07:00:00Z", "2026-10-20T09:00:00Z"), // weekly, summer time; 27 Oct excluded (EXDATE)
		iv("2026-11-04T12:00:00Z", "2026-11-04T14:00:00Z"), // 3 Nov moved to 4 Nov 13–15 (RECURRENCE-ID)
		iv("2026-11-17T08:00:00Z", "2026-11-17T10:00:00Z"), // winter time; 10 Nov cancelled
	}
	googleHoliday = iv("2026-10-27T23:00:00Z", "2026-10-30T23:00:00Z") // all-day 28–30 Oct, marked free
	outlookBusy   = []calsync.Interval{
		iv("2026-10-22T12:00:00Z", "2026-10-22T13:00:00Z"), // Windows TZID, summer time
		iv("2026-10-24T20:00:00Z", "2026-10-25T03:00:00Z"), // 22:00–04:00 across the DST change: 7 hours
		iv("2026-10-30T06:00:00Z", "2026-10-30T07:00:00Z"), // last weekday of the month (BYSETPOS=-1)
	}
	outlookFree = iv("2026-10-23T09:00:00Z", "2026-10-23T10:00:00Z")
	icloudBusy  = []calsync.Interval{
		iv("2026-10-21T05:00:00Z", "2026-10-21T05:30:00Z"), // daily, COUNT=2
		iv("2026-10-22T05:00:00Z", "2026-10-22T05:30:00Z"),
		iv("2026-10-26T07:00:00Z", "2026-10-26T08:30:00Z"), // floating time, read in Stockholm
		iv("2026-10-28T06:00:00Z", "2026-10-28T06:30:00Z"), // RDATE
		iv("2026-10-29T12:00:00Z", "2026-10-29T14:00:00Z"), // VFREEBUSY
		iv("2026-11-01T23:00:00Z", "2026-11-04T23:00:00Z"), // all-day 2–4 Nov
	}
)

func TestParseExportedFeeds(t *testing.T) {
	t.Parallel()
	with := func(in []calsync.Interval, extra calsync.Interval) []calsync.Interval {
		out := append([]calsync.Interval{extra}, in...)
		for i := 1; i < len(out) && out[i].Start.Before(out[i-1].Start); i++ {
			out[i], out[i-1] = out[i-1], out[i]
		}
		return out
	}
	cases := []struct {
		name, file string
		rule       calsync.Rule
		want       []calsync.Interval
		own        int
	}{
		{"google busy only", "google.ics", calsync.RuleBusyOnly, googleBusy, 1},
		{"google all-day busy", "google.ics", calsync.RuleAllDayBusy, with(googleBusy, googleHoliday), 1},
		{"google everything", "google.ics", calsync.RuleEverything, with(googleBusy, googleHoliday), 1},
		{"outlook busy only", "outlook.ics", calsync.RuleBusyOnly, outlookBusy, 0},
		{"outlook all-day busy", "outlook.ics", calsync.RuleAllDayBusy, outlookBusy, 0},
		{"outlook everything", "outlook.ics", calsync.RuleEverything, with(outlookBusy, outlookFree), 0},
		{"icloud busy only", "icloud.ics", calsync.RuleBusyOnly, icloudBusy, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := calsync.Parse(readFeed(t, tc.file), calsync.ParseOptions{From: windowFrom, To: windowTo, Rule: tc.rule,
				OwnUIDDomain: "bokat.test"})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := formatBusy(got.Busy), formatBusy(tc.want); g != w {
				t.Errorf("busy =\n%s\nwant\n%s", g, w)
			}
			if got.Own != tc.own || got.Skipped != 0 || got.Partial != 0 || got.UnknownZones != 0 {
				t.Errorf("own %d skipped %d partial %d unknown zones %d, want own %d and no others",
					got.Own, got.Skipped, got.Partial, got.UnknownZones, tc.own)
			}
		})
	}
}
