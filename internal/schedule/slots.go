package schedule

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxSlotDays bounds how many calendar days one call of Slots walks.
const maxSlotDays = 366

// SlotParams describes one slot search. Instants may be in any location;
// every wall-clock rule is applied in Stockholm.
type SlotParams struct {
	// Hours are the working hours; a slot lies entirely inside one range.
	// Malformed ranges (see WeeklyHours.Validate) are skipped.
	Hours WeeklyHours
	// From and To bound the search: a slot lies entirely inside [From, To).
	From, To time.Time
	// Duration is the elapsed length of the job. Zero or negative gives no slots.
	Duration time.Duration
	// Step is the distance between slot starts on the wall clock, counted from
	// the start of each working range (08:00, 09:00, ... for one hour).
	// Zero or negative means one hour.
	Step time.Duration
	// Busy are bookings and blocked periods; a slot overlaps none of them.
	// Touching is allowed: a slot may end when a busy interval starts.
	Busy []Interval
	// Earliest is the first permitted slot start, typically now plus a lead
	// time. The zero time means no bound beyond From.
	Earliest time.Time
	// Daily, when not zero, further restricts every day to that wall-clock
	// range (it is intersected with Hours), as from Window.Daily.
	Daily ClockRange
	// Starts, when not zero, restricts the start of every slot to that
	// wall-clock range of each day, as from Window.Starts.
	Starts ClockRange
	// Except lists days of the week without slots, as from Window.Except.
	Except Weekdays
	// Limit stops the search after that many slots; zero or negative means no limit.
	Limit int
}

// Slots returns the free slots described by p, sorted by start, without
// duplicates, with times in UTC. Slot starts are computed on the Stockholm
// wall clock with time.Date, so a range that opens at 08:00 yields a slot
// starting 07:00 UTC in winter and 06:00 UTC in summer, including on the
// day of a DST change. A slot lasts exactly p.Duration and never extends
// past the end of its working range. There are no slots on the days
// IsNonWorkingDay reports. At most 366 calendar days from the first
// permitted start are searched. The result is deterministic for equal input.
func Slots(p SlotParams) []Interval {
	if p.Duration <= 0 {
		return nil
	}
	step := p.Step
	if step <= 0 {
		step = time.Hour
	}
	stepSec := int64(step / time.Second)
	if stepSec <= 0 {
		stepSec = 1
	}
	lo := p.From
	if p.Earliest.After(lo) {
		lo = p.Earliest
	}
	if !lo.Before(p.To) {
		return nil
	}
	byStart := func(a, b Interval) int { return a.Start.Compare(b.Start) }
	busy := p.Busy
	if !slices.IsSortedFunc(busy, byStart) {
		busy = slices.Clone(busy)
		slices.SortFunc(busy, byStart)
	}

	first, last := DateOf(lo), DateOf(p.To)
	if limit := first.AddDays(maxSlotDays); last.After(limit) {
		last = limit
	}
	var out []Interval
	for d := first; !d.After(last); d = d.AddDays(1) {
		if off, _ := IsNonWorkingDay(d); off || p.Except.Has(d.Weekday()) {
			continue
		}
		// The day's slots go straight into out; working ranges may
		// interleave and a DST change may map two wall-clock starts to one
		// instant, so that part of out is sorted and deduplicated.
		dayStart := len(out)
		for _, r := range p.Hours[d.Weekday()] {
			if r.Validate() != nil {
				continue
			}
			if !p.Daily.IsZero() {
				var ok bool
				if r, ok = r.intersect(p.Daily); !ok {
					continue
				}
			}
			rangeEnd := d.At(r.End)
			for k := int64(0); ; k++ {
				start := d.atSecond(int64(r.Start)*60 + k*stepSec)
				end := start.Add(p.Duration)
				if end.After(rangeEnd) || end.After(p.To) {
					break
				}
				if start.Before(lo) {
					continue
				}
				if !p.Starts.IsZero() && !startsIn(start, d, p.Starts) {
					if !start.Before(d.At(p.Starts.End)) {
						break
					}
					continue
				}
				slot := Interval{Start: start.UTC(), End: end.UTC()}
				if overlapsAny(busy, slot) {
					continue
				}
				out = append(out, slot)
			}
		}
		day := out[dayStart:]
		slices.SortFunc(day, byStart)
		out = append(out[:dayStart], slices.CompactFunc(day, func(a, b Interval) bool { return a.Start.Equal(b.Start) })...)
		if p.Limit > 0 && len(out) >= p.Limit {
			return out[:p.Limit]
		}
	}
	return out
}

// overlapsAny reports whether slot overlaps an interval of busy, which is
// sorted by start.
// startsIn reports whether start, on day d, lies in the wall-clock range r
// (compared as instants, so it holds across a DST change).
func startsIn(start time.Time, d Date, r ClockRange) bool {
	return !start.Before(d.At(r.Start)) && start.Before(d.At(r.End))
}

func overlapsAny(busy []Interval, slot Interval) bool {
	for _, b := range busy {
		if !b.Start.Before(slot.End) {
			return false
		}
		if b.Overlaps(slot) {
			return true
		}
	}
	return false
}

// SlotLabel describes iv on the Stockholm wall clock in the locale's language:
// a locale starting with "en" gives English, any other Swedish.
//
//	sv: "tisdag 24 november 2026 kl. 08:00–11:00"
//	en: "Tuesday 24 November 2026, 08:00–11:00"
//
// An interval ending at midnight ends at "24:00"; one spanning more days
// names both dates.
func SlotLabel(iv Interval, locale string) string {
	l := langOf(locale)
	loc := Stockholm()
	start, end := iv.Start.In(loc), iv.End.In(loc)
	sd, ed := DateOf(start), DateOf(end)
	startMin := start.Hour()*60 + start.Minute()
	endMin := end.Hour()*60 + end.Minute()
	if ed == sd.AddDays(1) && endMin == 0 && end.Second() == 0 && sd != ed {
		ed, endMin = sd, MinutesPerDay
	}
	// A search labels every option it returns: the label is built in one
	// buffer, long enough for the longest, and copied once.
	var buf [96]byte
	at := " kl. "
	if l == english {
		at = ", "
	}
	b := appendLongDate(buf[:0], sd, l)
	b = append(b, at...)
	b = appendClock(b, startMin)
	if sd == ed {
		b = append(b, "–"...)
	} else {
		b = append(b, " – "...)
		b = appendLongDate(b, ed, l)
		b = append(b, at...)
	}
	return string(appendClock(b, endMin))
}

// lang is the language of labels.
type lang int

const (
	swedish lang = iota
	english
)

// langOf maps a locale to a label language: "en", "en-GB", "EN_us" are
// English, everything else (including the empty locale) Swedish.
func langOf(locale string) lang {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(locale)), "en") {
		return english
	}
	return swedish
}

// weekdayName returns the name of wd, lower case in Swedish, capitalized in English.
func weekdayName(wd time.Weekday, l lang) string {
	names := [2][7]string{
		{"söndag", "måndag", "tisdag", "onsdag", "torsdag", "fredag", "lördag"},
		{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"},
	}
	return names[l][wd]
}

// monthName returns the name of m, lower case in Swedish, capitalized in English.
func monthName(m time.Month, l lang) string {
	names := [2][12]string{
		{"januari", "februari", "mars", "april", "maj", "juni", "juli", "augusti", "september", "oktober", "november", "december"},
		{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"},
	}
	return names[l][m-1]
}

// longDate formats d as "tisdag 24 november 2026" or "Tuesday 24 November 2026".
func longDate(d Date, l lang) string {
	return dayMonth(d, l) + " " + strconv.Itoa(d.Year)
}

// appendLongDate appends what longDate returns.
func appendLongDate(b []byte, d Date, l lang) []byte {
	b = append(b, weekdayName(d.Weekday(), l)...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(d.Day), 10)
	b = append(b, ' ')
	b = append(b, monthName(d.Month, l)...)
	b = append(b, ' ')
	return strconv.AppendInt(b, int64(d.Year), 10)
}

// dayMonth formats d without its year: "tisdag 24 november".
func dayMonth(d Date, l lang) string {
	return weekdayName(d.Weekday(), l) + " " + strconv.Itoa(d.Day) + " " + monthName(d.Month, l)
}
