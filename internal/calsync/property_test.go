package calsync_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teambition/rrule-go"

	"bokat/internal/calsync"
	"bokat/internal/schedule"
)

// TestRecurrenceMatchesReference expands random recurring events (daily,
// weekly, monthly and yearly rules with INTERVAL, COUNT or UNTIL, BYDAY
// with and without ordinals, BYMONTHDAY, BYMONTH, BYSETPOS, WKST, and
// EXDATE) with Parse and with rrule-go's iterator, the reference, and
// wants the same busy intervals over the window.
func TestRecurrenceMatchesReference(t *testing.T) {
	t.Parallel()
	stockholm := schedule.Stockholm()
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 24))
		opt := randomRule(r, stockholm)
		ref, err := rrule.NewRRule(opt)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		// DTSTART is the rule's first occurrence, as calendar applications
		// write it (RFC 5545 leaves an unsynchronised DTSTART undefined).
		first := ref.After(opt.Dtstart.Add(-time.Second), true)
		if first.IsZero() {
			continue
		}
		opt.Dtstart = first
		if ref, err = rrule.NewRRule(opt); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		dur := time.Duration(15+r.IntN(8*60)) * time.Minute
		starts := ref.Between(windowFrom.Add(-dur-24*time.Hour), windowTo, true)
		var exdates []time.Time
		for _, s := range starts {
			if r.IntN(5) == 0 {
				exdates = append(exdates, s)
			}
		}
		var want []calsync.Interval
		for _, s := range starts {
			if slices.ContainsFunc(exdates, s.Equal) {
				continue
			}
			if e := s.Add(dur); e.After(windowFrom) && s.Before(windowTo) {
				want = append(want, calsync.Interval{Start: s.UTC(), End: e.UTC()})
			}
		}
		want = mergeRef(want)
		feed := recurringFeed(opt, dur, exdates)
		got, err := calsync.Parse([]byte(feed), calsync.ParseOptions{From: windowFrom, To: windowTo})
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, feed)
		}
		if got.Partial != 0 {
			t.Fatalf("seed %d: rule expanded partially\n%s", seed, feed)
		}
		if g, w := formatBusy(got.Busy), formatBusy(want); g != w {
			t.Fatalf("seed %d:\n%s\nbusy =\n%s\nwant (reference)\n%s", seed, feed, g, w)
		}
	}
}

func randomRule(r *rand.Rand, loc *time.Location) rrule.ROption {
	days := []rrule.Weekday{rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA, rrule.SU}
	start := windowFrom.AddDate(0, 0, -r.IntN(500)+20).In(loc)
	start = time.Date(start.Year(), start.Month(), start.Day(), 6+r.IntN(14), 15*r.IntN(4), 0, 0, loc)
	opt := rrule.ROption{Dtstart: start, Interval: 1 + r.IntN(3), Wkst: days[r.IntN(2)*6]}
	pickDays := func() []rrule.Weekday {
		var out []rrule.Weekday
		for _, d := range days {
			if r.IntN(3) == 0 {
				out = append(out, d)
			}
		}
		if len(out) == 0 {
			out = append(out, days[r.IntN(7)])
		}
		return out
	}
	switch r.IntN(4) {
	case 0:
		opt.Freq = rrule.DAILY
		if r.IntN(2) == 0 {
			opt.Byweekday = pickDays()
		}
	case 1:
		opt.Freq = rrule.WEEKLY
		if r.IntN(4) != 0 {
			opt.Byweekday = pickDays()
		}
	case 2:
		opt.Freq = rrule.MONTHLY
		opt.Interval = 1 + r.IntN(2)
		switch r.IntN(4) {
		case 0:
			opt.Byweekday = []rrule.Weekday{days[r.IntN(7)].Nth([]int{1, 2, 3, 4, -1, -2}[r.IntN(6)])}
		case 1:
			opt.Byweekday = []rrule.Weekday{rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR}
			opt.Bysetpos = []int{[]int{1, -1, 2}[r.IntN(3)]}
		case 2:
			opt.Bymonthday = []int{[]int{1, 15, 28, 31, -1}[r.IntN(5)]}
		}
	case 3:
		opt.Freq = rrule.YEARLY
		opt.Interval = 1
		opt.Dtstart = start.AddDate(-r.IntN(3), 0, 0)
		switch r.IntN(3) {
		case 0:
			opt.Bymonth = []int{1 + r.IntN(12), 1 + r.IntN(12)}
			opt.Byweekday = []rrule.Weekday{days[r.IntN(7)].Nth([]int{1, -1, 2}[r.IntN(3)])}
		case 1:
			opt.Bymonth = []int{10, 11}
			opt.Bymonthday = []int{1 + r.IntN(28)}
		}
	}
	switch r.IntN(3) {
	case 0:
		opt.Count = 1 + r.IntN(200)
	case 1:
		opt.Until = windowFrom.AddDate(0, 0, r.IntN(40)-5).Add(time.Duration(r.IntN(24)) * time.Hour).UTC()
	}
	return opt
}

func recurringFeed(opt rrule.ROption, dur time.Duration, exdates []time.Time) string {
	const local = "20060102T150405"
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Bokat//property test//EN\r\nBEGIN:VEVENT\r\nUID:prop@example.se\r\n")
	fmt.Fprintf(&b, "DTSTART;TZID=Europe/Stockholm:%s\r\n", opt.Dtstart.Format(local))
	fmt.Fprintf(&b, "DTEND;TZID=Europe/Stockholm:%s\r\n", opt.Dtstart.Add(dur).In(opt.Dtstart.Location()).Format(local))
	fmt.Fprintf(&b, "RRULE:%s\r\n", opt.RRuleString())
	for _, e := range exdates {
		fmt.Fprintf(&b, "EXDATE;TZID=Europe/Stockholm:%s\r\n", e.In(opt.Dtstart.Location()).Format(local))
	}
	b.WriteString("END:VEVENT\r\nEND:VCALENDAR\r\n")
	return b.String()
}

func mergeRef(in []calsync.Interval) []calsync.Interval {
	slices.SortFunc(in, func(a, b calsync.Interval) int { return a.Start.Compare(b.Start) })
	var out []calsync.Interval
	for _, x := range in {
		if n := len(out); n > 0 && !x.Start.After(out[n-1].End) {
			if x.End.After(out[n-1].End) {
				out[n-1].End = x.End
			}
			continue
		}
		out = append(out, x)
	}
	return out
}
