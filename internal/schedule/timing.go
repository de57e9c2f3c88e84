package schedule

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Window lengths of the timing rules, in calendar days on the Stockholm wall clock.
const (
	// DefaultWindowDays is the length of the window used when no timing
	// phrase is understood, and of the "flexibel"/"flexible" window.
	DefaultWindowDays = 14
	// ASAPWindowDays is the length of the "så snart som möjligt"/"asap" window.
	ASAPWindowDays = 3
)

// Window is the time a customer asked for, read from free text.
type Window struct {
	// Start and End bound the window [Start, End) as instants in UTC.
	// Start is never before the now passed to ParseTiming, and End is after Start.
	Start, End time.Time
	// Daily, when not zero, restricts every day of the window to that
	// wall-clock range ("förmiddag", "efter 15"). It is already applied to
	// Start and End of a one-day window; on longer windows it must be applied
	// per day, e.g. through SlotParams.Daily.
	Daily ClockRange
	// Label describes the window in the request's language.
	Label string
	// Understood is false when the window is the default because no phrase
	// was understood, or the phrase named a time that has passed.
	Understood bool
	// Phrase lists the phrases that decided the window as the customer wrote
	// them, joined by " + " (for example "tisdag + förmiddagen"). It may be
	// set when Understood is false because the time has passed.
	Phrase string
}

// Interval returns [w.Start, w.End).
func (w Window) Interval() Interval { return Interval{Start: w.Start, End: w.End} }

// reading is what one text says: at most one part per question.
type reading struct {
	day, scope, rel, clock *part
}

func (r reading) empty() bool { return r.day == nil && r.rel == nil && r.clock == nil }

// read picks, for each question, the phrase that answers it. Among phrases
// of one kind the first in the text wins; a specific day beats a relative
// window ("snarast, helst tisdag" is Tuesday); a weekday and a week phrase
// combine ("tisdag nästa vecka" is Tuesday of next week).
func read(parts []part, source int) reading {
	var r reading
	var weekday, scope *part
	for _, p := range parts {
		p.source = source
		switch p.class {
		case classDay:
			switch {
			case p.day == dayWeekday && weekday == nil:
				weekday = &p
			case (p.day.isWeekScope() || p.isStretch()) && scope == nil:
				scope = &p
			}
			if r.day == nil {
				r.day = &p
			}
		case classRel:
			if r.rel == nil {
				r.rel = &p
			}
		}
		if p.hasTime && r.clock == nil {
			r.clock = &p
		}
	}
	if weekday != nil && scope != nil {
		r.day, r.scope = weekday, scope
	}
	return r
}

// ParseTiming reads the customer's timing texts into a window on the
// Stockholm wall clock, with a label in the locale's language (a locale
// starting with "en" is English, any other Swedish). PHRASES.md lists the
// understood phrases and their windows.
//
// Both texts are read. For each question (which day, how soon, which time
// of day) preferredText wins when both answer it; otherwise the answers
// combine, so preferred "förmiddag" with urgency "inom en vecka" is
// mornings within seven days. When nothing is understood, or the phrase
// names a time that has passed and cannot roll forward (a date with its
// year, "i dag" after the part of day asked for), the result is the default
// window [now, now + 14 days) with Understood false and a label that says it
// is a default and why. ParseTiming never fails.
func ParseTiming(preferredText, urgency, locale string, now time.Time) Window {
	return parseTiming(preferredText, urgency, locale, now, findParts)
}

// parseTiming is ParseTiming with the phrase finder given, so that a
// TimingReader can remember what texts say.
func parseTiming(preferredText, urgency, locale string, now time.Time, find func(string) []part) Window {
	l := langOf(locale)
	now = now.In(Stockholm())
	pref, urg := read(find(preferredText), 0), read(find(urgency), 1)
	if pref.empty() && urg.empty() {
		reason := reasonUnreadable
		if strings.TrimSpace(preferredText) == "" && strings.TrimSpace(urgency) == "" {
			reason = reasonEmpty
		}
		return defaultWindow(now, l, reason, "")
	}
	r := pref
	if r.day == nil && r.rel == nil {
		r.day, r.scope, r.rel = urg.day, urg.scope, urg.rel
	}
	if r.clock == nil {
		r.clock = urg.clock
	}
	w, ok := resolve(r, now, l)
	w.Phrase = phrases(r)
	if !ok {
		return defaultWindow(now, l, reasonPassed, w.Phrase)
	}
	w.Understood = true
	w.Start, w.End = w.Start.UTC(), w.End.UTC()
	return w
}

// phrases joins the phrases of the parts r uses: those of the preferred
// text first, each text in the order the customer wrote them.
func phrases(r reading) string {
	var used []*part
	for _, p := range []*part{r.scope, r.day, r.rel, r.clock} {
		if p == nil || slices.Contains(used, p) || (p == r.rel && r.day != nil) {
			continue
		}
		used = append(used, p)
	}
	slices.SortFunc(used, func(a, b *part) int {
		if a.source != b.source {
			return a.source - b.source
		}
		return a.span.start - b.span.start
	})
	out := make([]string, len(used))
	for i, p := range used {
		out[i] = p.phrase
	}
	return strings.Join(out, " + ")
}

// resolve computes the window of r. It reports false when the window lies
// entirely in the past and cannot roll forward.
func resolve(r reading, now time.Time, l lang) (Window, bool) {
	clock := ClockRange{Start: 0, End: MinutesPerDay}
	var daily ClockRange
	if r.clock != nil {
		clock, daily = r.clock.clock, r.clock.clock
	}
	today := DateOf(now)
	var w Window
	switch {
	case r.day != nil:
		first, last, anchorFirst, anchorLast, ok := r.days(today, now, clock)
		if !ok || last.Before(first) {
			return Window{}, false
		}
		w.Start = latest(now, first.At(clock.Start))
		w.End = last.At(clock.End)
		if r.day.mod != modNone {
			w.Label = modLabel(r, latestDate(first, today), last, anchorFirst, anchorLast, l)
		} else {
			w.Label = dayLabel(r, latestDate(first, today), last, l)
		}
	case r.rel != nil:
		w.Start = now
		switch r.rel.rel {
		case relASAP:
			w.End = now.AddDate(0, 0, ASAPWindowDays)
		case relFlexible:
			w.End = now.AddDate(0, 0, DefaultWindowDays)
		default:
			w.End = addUnits(now, r.rel.n, r.rel.unit)
		}
		w.Label = relLabel(r.rel, l)
	default:
		w.Start, w.End = now, now.AddDate(0, 0, DefaultWindowDays)
		w.Label = within14(l)
	}
	if r.clock != nil {
		w.Start, w.End = tighten(w.Start, w.End, daily)
		w.Daily = daily
		w.Label += ", " + clockLabel(r.clock, l)
	}
	if !w.End.After(w.Start) {
		return Window{}, false
	}
	return w, true
}

// tighten moves start forward and end back to the nearest instants that the
// daily wall-clock range allows, so a window starts and ends inside it.
func tighten(start, end time.Time, daily ClockRange) (time.Time, time.Time) {
	d := DateOf(start)
	if open := d.At(daily.Start); start.Before(open) {
		start = open
	} else if !start.Before(d.At(daily.End)) {
		start = d.AddDays(1).At(daily.Start)
	}
	e := DateOf(end)
	if shut := e.At(daily.End); end.After(shut) {
		end = shut
	} else if !end.After(e.At(daily.Start)) {
		end = e.AddDays(-1).At(daily.End)
	}
	return start, end
}

// days returns the first and last day of r's day phrase: the next occurrence
// whose end (last day at clock.End) is after now for phrases that repeat
// (weekdays, weekends, week numbers, dates without a year, months, holidays),
// the named days otherwise; a "före", "efter" or "kring" in front turns them
// into the days before, after or around that occurrence. It also returns the
// occurrence itself, and reports false when the days have passed.
func (r reading) days(today Date, now time.Time, clock ClockRange) (first, last, anchorFirst, anchorLast Date, ok bool) {
	ahead := func(_, last Date) bool { return last.At(clock.End).After(now) }
	if r.scope != nil && r.scope.isStretch() {
		// A weekday inside a longer stretch ("onsdag om två veckor", "en
		// tisdag i december"): the first such day of the stretch's occurrence
		// that is still ahead; a repeating stretch without one left rolls on
		// ("tisdag i slutet av månaden" read on the last Monday of a month).
		day := func(first, last Date) (Date, bool) {
			for d := latestDate(first, today); !d.After(last); d = d.AddDays(1) {
				if d.Weekday() == r.day.weekday && ahead(d, d) {
					return d, true
				}
			}
			return Date{}, false
		}
		scope := reading{day: r.scope}
		var sf, sl Date
		var ok bool
		if r.scope.mod == modNone {
			sf, sl, ok = scope.anchor(today, func(first, last Date) bool { _, found := day(first, last); return found })
		} else {
			sf, sl, _, _, ok = scope.days(today, now, clock)
		}
		d, found := day(sf, sl)
		return d, d, d, d, ok && found
	}
	switch r.day.mod {
	case modBefore:
		// The occurrence that starts after today, so the window is not empty.
		f, l, ok := r.anchor(today, func(first, _ Date) bool { return first.After(today) })
		return today, f.AddDays(-1), f, l, ok
	case modBy:
		f, l, ok := r.anchor(today, ahead)
		return today, l, f, l, ok
	case modAfter:
		f, l, ok := r.anchor(today, ahead)
		return l.AddDays(1), l.AddDays(afterWindowDays), f, l, ok
	case modFrom:
		f, l, ok := r.anchor(today, ahead)
		return f, f.AddDays(afterWindowDays - 1), f, l, ok
	case modDayBefore:
		f, l, ok := r.anchor(today, func(first, _ Date) bool { d := first.AddDays(-1); return ahead(d, d) })
		return f.AddDays(-1), f.AddDays(-1), f, l, ok
	case modDayAfter:
		f, l, ok := r.anchor(today, func(_, last Date) bool { d := last.AddDays(1); return ahead(d, d) })
		return l.AddDays(1), l.AddDays(1), f, l, ok
	case modAround:
		f, l, ok := r.anchor(today, func(_, last Date) bool { return ahead(last, last.AddDays(aroundDays)) })
		return f.AddDays(-aroundDays), l.AddDays(aroundDays), f, l, ok
	}
	f, l, ok := r.anchor(today, ahead)
	return f, l, f, l, ok
}

// anchor returns the first and last day of r's day phrase: the named days,
// or for phrases that repeat the first occurrence for which keep holds.
func (r reading) anchor(today Date, keep func(first, last Date) bool) (Date, Date, bool) {
	p := r.day
	monday := today.AddDays(1 - isoWeekday(today))
	switch p.day {
	case dayToday:
		return today, today, keep(today, today)
	case dayTomorrow:
		d := today.AddDays(1)
		return d, d, keep(d, d)
	case dayAfterTomorrow:
		d := today.AddDays(2)
		return d, d, keep(d, d)
	case dayThisWeek, dayNextWeek, dayWeekNumber:
		for _, m := range weekMondays(p, monday) {
			if last := m.AddDays(6); keep(m, last) {
				return m, last, true
			}
		}
		return Date{}, Date{}, false
	case dayWeekend:
		sat := monday.AddDays(5)
		if !keep(sat, sat.AddDays(1)) {
			sat = sat.AddDays(7)
		}
		return sat, sat.AddDays(1), true
	case dayWeekday:
		offset := isoNumber(p.weekday) - 1
		if r.scope != nil {
			for _, m := range weekMondays(r.scope, monday) {
				if d := m.AddDays(offset); keep(d, d) {
					return d, d, true
				}
			}
			return Date{}, Date{}, false
		}
		d := monday.AddDays(offset)
		for !keep(d, d) || d.Before(today) {
			d = d.AddDays(7)
		}
		return d, d, true
	case dayDate:
		if p.dayOnly {
			return seasonDays(p, today, keep)
		}
		if p.yearGiven {
			return p.date, p.date, keep(p.date, p.date)
		}
		for y := today.Year; y <= today.Year+8; y++ {
			d := Date{Year: y, Month: p.date.Month, Day: p.date.Day}
			if d.Valid() && keep(d, d) {
				return d, d, true
			}
		}
	default:
		return seasonDays(p, today, keep)
	}
	return Date{}, Date{}, false
}

// weekMondays returns the Mondays a week phrase can mean, in order of
// preference: this week, next week, or week N of this ISO year and the two
// following (week 53 exists only in some years).
func weekMondays(p *part, monday Date) []Date {
	switch p.day {
	case dayThisWeek:
		return []Date{monday}
	case dayNextWeek:
		return []Date{monday.AddDays(7)}
	}
	years := []int{p.weekYear}
	if !p.yearGiven {
		y, _ := monday.ISOWeek()
		years = []int{y, y + 1, y + 2}
	}
	var out []Date
	for _, y := range years {
		if m, ok := isoWeekMonday(y, p.week); ok {
			out = append(out, m)
		}
	}
	return out
}

// isoWeekMonday returns the Monday of ISO week w of ISO year y, and false if
// the year has no such week.
func isoWeekMonday(y, w int) (Date, bool) {
	jan4 := Date{Year: y, Month: time.January, Day: 4}
	m := jan4.AddDays(1 - isoWeekday(jan4) + 7*(w-1))
	gy, gw := m.ISOWeek()
	return m, gy == y && gw == w
}

// isoWeekday numbers the weekday of d from Monday 1 to Sunday 7.
func isoWeekday(d Date) int { return isoNumber(d.Weekday()) }

// isoNumber numbers wd from Monday 1 to Sunday 7.
func isoNumber(wd time.Weekday) int {
	if wd == time.Sunday {
		return 7
	}
	return int(wd)
}

func addUnits(t time.Time, n int, u relUnit) time.Time {
	switch u {
	case unitHour:
		return t.Add(time.Duration(n) * time.Hour)
	case unitDay:
		return t.AddDate(0, 0, n)
	case unitWeek:
		return t.AddDate(0, 0, 7*n)
	default:
		return t.AddDate(0, n, 0)
	}
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func latestDate(a, b Date) Date {
	if a.After(b) {
		return a
	}
	return b
}

// reason says why a window is the default.
type reason int

const (
	reasonUnreadable reason = iota
	reasonEmpty
	reasonPassed
)

// defaultWindow is [now, now + 14 days) with a label that says it is a default.
func defaultWindow(now time.Time, l lang, why reason, phrase string) Window {
	because := [2][3]string{
		{"tidsönskemålet kunde inte tolkas", "inget tidsönskemål angavs", "den önskade tiden har redan passerat"},
		{"the preferred time could not be read", "no preferred time was given", "the requested time has already passed"},
	}
	return Window{
		Start:  now.UTC(),
		End:    now.AddDate(0, 0, DefaultWindowDays).UTC(),
		Label:  within14(l) + " (" + because[l][why] + ")",
		Phrase: phrase,
	}
}

func within14(l lang) string {
	if l == english {
		return "Within the next " + strconv.Itoa(DefaultWindowDays) + " days"
	}
	return "Inom de närmaste " + strconv.Itoa(DefaultWindowDays) + " dagarna"
}

// dayLabel names the days of a day phrase; first is already clipped to today.
func dayLabel(r reading, first, last Date, l lang) string {
	en := l == english
	pick := func(sv, enText string) string {
		if en {
			return enText
		}
		return sv
	}
	p := r.day
	switch p.day {
	case dayToday:
		return pick("I dag", "Today") + ", " + longDate(first, l)
	case dayTomorrow:
		return pick("I morgon", "Tomorrow") + ", " + longDate(first, l)
	case dayAfterTomorrow:
		return pick("I övermorgon", "The day after tomorrow") + ", " + longDate(first, l)
	case dayThisWeek, dayNextWeek, dayWeekNumber:
		_, wk := last.ISOWeek()
		week := pick("vecka ", "week ") + strconv.Itoa(wk)
		switch p.day {
		case dayThisWeek:
			return pick("Denna vecka", "This week") + " (" + week + "), " + dateRange(first, last, l)
		case dayNextWeek:
			return pick("Nästa vecka", "Next week") + " (" + week + "), " + dateRange(first, last, l)
		}
		return capitalize(week) + ", " + dateRange(first, last, l)
	case dayWeekend:
		return pick("Helgen", "The weekend") + ", " + dateRange(first, last, l)
	case dayHoliday, dayMonthSpan, dayWeekPart, dayOffset:
		return seasonLabel(p, first, last, l)
	}
	return capitalize(longDate(first, l))
}

// dateRange formats "måndag 23 november – söndag 29 november 2026"; the
// first year is written only when the years differ.
func dateRange(first, last Date, l lang) string {
	switch {
	case first == last:
		return longDate(first, l)
	case first.Year == last.Year:
		return dayMonth(first, l) + " – " + longDate(last, l)
	}
	return longDate(first, l) + " – " + longDate(last, l)
}

func relLabel(p *part, l lang) string {
	en := l == english
	switch p.rel {
	case relASAP:
		if en {
			return "As soon as possible (within " + strconv.Itoa(ASAPWindowDays) + " days)"
		}
		return "Så snart som möjligt (inom " + strconv.Itoa(ASAPWindowDays) + " dagar)"
	case relFlexible:
		if en {
			return "Flexible, within the next " + strconv.Itoa(DefaultWindowDays) + " days"
		}
		return "Flexibelt, inom de närmaste " + strconv.Itoa(DefaultWindowDays) + " dagarna"
	}
	// [unit][language][singular, plural]
	units := [4][2][2]string{
		unitHour:  {{"en timme", "timmar"}, {"an hour", "hours"}},
		unitDay:   {{"en dag", "dagar"}, {"a day", "days"}},
		unitWeek:  {{"en vecka", "veckor"}, {"a week", "weeks"}},
		unitMonth: {{"en månad", "månader"}, {"a month", "months"}},
	}
	amount := units[p.unit][l][0]
	if p.n != 1 {
		amount = strconv.Itoa(p.n) + " " + units[p.unit][l][1]
	}
	if en {
		return "Within " + amount
	}
	return "Inom " + amount
}

func clockLabel(p *part, l lang) string {
	r := p.clock
	en := l == english
	switch p.time {
	case timeMorning:
		if en {
			return "morning (" + r.String() + ")"
		}
		return "förmiddag (" + r.String() + ")"
	case timeAfternoon:
		if en {
			return "afternoon (" + r.String() + ")"
		}
		return "eftermiddag (" + r.String() + ")"
	case timeEvening:
		if en {
			return "evening (" + r.String() + ")"
		}
		return "kväll (" + r.String() + ")"
	case timeDaytime:
		if en {
			return "daytime (" + r.String() + ")"
		}
		return "dagtid (" + r.String() + ")"
	case timeAfter:
		if en {
			return "after " + clock(r.Start)
		}
		return "efter kl. " + clock(r.Start)
	case timeBefore:
		if en {
			return "before " + clock(r.End)
		}
		return "före kl. " + clock(r.End)
	}
	if en {
		return r.String()
	}
	return "kl. " + r.String()
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
