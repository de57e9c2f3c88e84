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
	// Starts, when not zero, restricts the start of every slot to that
	// wall-clock range of each day: a clock time ("kl 9", "at 9am") is
	// slots starting from 09:00 to 09:59 (Starts 09:00–10:00, Daily
	// 09:00–24:00). Apply it through SlotParams.Starts.
	Starts ClockRange
	// Except lists the days of the week the customer does not want ("men
	// inte fredag", "except Monday"); no slot may fall on them. Start and
	// End are already moved off them; apply it through SlotParams.Except.
	Except Weekdays
	// Label describes the window in the request's language.
	Label string
	// Understood is false when the window is the default because no phrase
	// was understood, or the phrase named a time that has passed.
	Understood bool
	// Phrase lists the phrases that decided the window as the customer wrote
	// them, joined by " + " (for example "tisdag + förmiddagen"). It may be
	// set when Understood is false because the time has passed.
	Phrase string
	// Unused lists, in the order written (the preferred time text first),
	// the parts of the texts that did not decide the window, as the
	// customer wrote them: words no phrase covers ("bitti", "efter lönen")
	// and phrases read but not used ("tisdag" in "i morgon eller tisdag").
	// Connectives and courtesy words ("och", "helst", "please") are never
	// listed. Empty when every word was used.
	Unused []string
}

// Interval returns [w.Start, w.End).
func (w Window) Interval() Interval { return Interval{Start: w.Start, End: w.End} }

// Equal reports whether w and o are the same window.
func (w Window) Equal(o Window) bool {
	return w.Start.Equal(o.Start) && w.End.Equal(o.End) && w.Daily == o.Daily && w.Starts == o.Starts &&
		w.Except == o.Except && w.Label == o.Label && w.Understood == o.Understood && w.Phrase == o.Phrase &&
		slices.Equal(w.Unused, o.Unused)
}

// Weekdays is a set of days of the week.
type Weekdays uint8

// WeekdaysOf returns the set of the days given.
func WeekdaysOf(days ...time.Weekday) Weekdays {
	var w Weekdays
	for _, d := range days {
		w |= 1 << uint(d)
	}
	return w
}

// Has reports whether d is in w.
func (w Weekdays) Has(d time.Weekday) bool { return w&(1<<uint(d)) != 0 }

// Days returns the days of w from Monday to Sunday.
func (w Weekdays) Days() []time.Weekday {
	var out []time.Weekday
	for i := 1; i <= 7; i++ {
		if d := time.Weekday(i % 7); w.Has(d) {
			out = append(out, d)
		}
	}
	return out
}

// reading is what one text says: at most one part per question, the days
// it leaves out, and the parts it does not use.
type reading struct {
	day, scope, rel, clock *part
	except                 []*part
	parts                  []part // every part of the text
	rest                   []fragment
}

func (r reading) empty() bool {
	return r.day == nil && r.rel == nil && r.clock == nil && len(r.except) == 0
}

// read picks, for each question, the phrase that answers it. Among phrases
// of one kind the first in the text wins; a specific day beats a relative
// window ("snarast, helst tisdag" is Tuesday); a weekday and a week phrase
// combine ("tisdag nästa vecka" is Tuesday of next week); a clock time
// beats a part of the day ("förmiddag, kl 10" is 10:00). Every exclusion
// is kept.
func read(f found, source int) reading {
	r := reading{parts: make([]part, len(f.parts)), rest: f.rest}
	copy(r.parts, f.parts)
	var weekday, scope *part
	for i := range r.parts {
		p := &r.parts[i]
		p.source = source
		if p.ignored {
			continue
		}
		switch p.class {
		case classDay:
			switch {
			case p.day == dayWeekday && weekday == nil:
				weekday = p
			case (p.day.isWeekScope() || p.isStretch()) && scope == nil:
				scope = p
			}
			if r.day == nil {
				r.day = p
			}
		case classRel:
			if r.rel == nil {
				r.rel = p
			}
		case classExcept:
			r.except = append(r.except, p)
		}
		if p.hasTime && (r.clock == nil || p.time == timeAt && isPartOfDay(r.clock.time)) {
			r.clock = p
		}
	}
	if weekday != nil && scope != nil {
		r.day, r.scope = weekday, scope
	}
	return r
}

// isPartOfDay reports whether k names a part of the day ("förmiddag").
func isPartOfDay(k timeKind) bool {
	return k == timeMorning || k == timeAfternoon || k == timeEvening || k == timeDaytime
}

// ParseTiming reads the customer's timing texts into a window on the
// Stockholm wall clock, with a label in the locale's language (a locale
// starting with "en" is English, any other Swedish). PHRASES.md lists the
// understood phrases and their windows.
//
// Both texts are read. For each question (which day, how soon, which time
// of day) preferredText wins when both answer it; otherwise the answers
// combine, so preferred "förmiddag" with urgency "inom en vecka" is
// mornings within seven days. Days left out ("men inte fredag") are taken
// from both texts. When nothing is understood, or the phrase
// names a time that has passed and cannot roll forward (a date with its
// year, "i dag" after the part of day asked for), the result is the default
// window [now, now + 14 days) with Understood false and a label that says it
// is a default and why. Window.Unused lists what was not used. ParseTiming
// never fails.
func ParseTiming(preferredText, urgency, locale string, now time.Time) Window {
	return parseTiming(preferredText, urgency, locale, now, findParts)
}

// parseTiming is ParseTiming with the phrase finder given, so that a
// TimingReader can remember what texts say.
func parseTiming(preferredText, urgency, locale string, now time.Time, find func(string) found) Window {
	l := langOf(locale)
	now = now.In(Stockholm())
	pref, urg := read(find(preferredText), 0), read(find(urgency), 1)
	if pref.empty() && urg.empty() {
		reason := reasonUnreadable
		if strings.TrimSpace(preferredText) == "" && strings.TrimSpace(urgency) == "" {
			reason = reasonEmpty
		}
		w := defaultWindow(now, l, reason, "")
		w.Unused = unused(reading{}, pref, urg)
		if len(w.Unused) == 0 && reason == reasonUnreadable {
			// A text of fillers only ("typ nån gång", "some time") was
			// not read either: the assistant asks about all of it.
			w.Unused = nonBlank(preferredText, urgency)
		}
		return w
	}
	r := pref
	if r.day == nil && r.rel == nil {
		r.day, r.scope, r.rel = urg.day, urg.scope, urg.rel
	}
	if r.clock == nil {
		r.clock = urg.clock
	}
	r.except = append(slices.Clip(pref.except), urg.except...)
	w, used, ok := resolve(r, now, l)
	w.Phrase = phrases(used)
	if !ok {
		w = defaultWindow(now, l, reasonPassed, w.Phrase)
		w.Unused = unused(r, pref, urg)
		return w
	}
	w.Understood = true
	w.Start, w.End = w.Start.UTC(), w.End.UTC()
	w.Unused = unused(used, pref, urg)
	return w
}

// nonBlank returns the texts that are not blank, trimmed, in order.
func nonBlank(texts ...string) []string {
	var out []string
	for _, t := range texts {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// phrases joins the phrases of the parts r uses: those of the preferred
// text first, each text in the order the customer wrote them.
func phrases(r reading) string {
	used := r.usedParts()
	out := make([]string, len(used))
	for i, p := range used {
		out[i] = p.phrase
	}
	return strings.Join(out, " + ")
}

// usedParts returns the parts r uses in text order (the preferred text
// first). A "how soon" phrase that a day overrides is not among them.
func (r reading) usedParts() []*part {
	var used []*part
	for _, p := range append([]*part{r.scope, r.day, r.rel, r.clock}, r.except...) {
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
	return used
}

// unused lists what the texts of pref and urg say that used does not use:
// the words no phrase covers, and the phrases used leaves aside, in text
// order (the preferred text first). A "how soon" phrase that a day
// overrides counts as used: it does not contradict the day.
func unused(used, pref, urg reading) []string {
	type item struct {
		source, start int
		text          string
	}
	var items []item
	for source, t := range []reading{pref, urg} {
		for _, fr := range t.rest {
			items = append(items, item{source, fr.start, fr.text})
		}
		for i := range t.parts {
			p := &t.parts[i]
			if isUsed(used, p, source) {
				continue
			}
			items = append(items, item{source, p.span.start, p.phrase})
		}
	}
	slices.SortFunc(items, func(a, b item) int {
		if a.source != b.source {
			return a.source - b.source
		}
		return a.start - b.start
	})
	var out []string
	for _, it := range items {
		out = append(out, it.text)
	}
	return out
}

// isUsed reports whether the part at p.span of text source is one used
// uses, or a "how soon" phrase used's day overrides.
func isUsed(used reading, p *part, source int) bool {
	same := func(q *part) bool { return q != nil && q.source == source && q.span == p.span }
	if same(used.day) || same(used.scope) || same(used.clock) || slices.ContainsFunc(used.except, same) {
		return true
	}
	if p.ignored {
		return false
	}
	// A part of the day that holds the clock time used ("förmiddag, helst
	// kl 10") agrees with it.
	if c := used.clock; c != nil && c.time == timeAt && p.class == classTime && isPartOfDay(p.time) &&
		p.clock.Start <= c.starts.Start && c.starts.Start < p.clock.End {
		return true
	}
	return p.class == classRel && (same(used.rel) || used.day != nil)
}

// resolve computes the window of r and returns the reading it used: r
// without the exclusions that would leave no day. It reports false when
// the window lies entirely in the past and cannot roll forward.
func resolve(r reading, now time.Time, l lang) (Window, reading, bool) {
	clock := ClockRange{Start: 0, End: MinutesPerDay}
	var daily, starts ClockRange
	if r.clock != nil {
		clock, daily, starts = r.clock.clock, r.clock.clock, r.clock.starts
	}
	// A day counts as ahead while a slot may still start on it.
	ahead := clock
	if !starts.IsZero() {
		ahead.End = starts.End
	}
	today := DateOf(now)
	var w Window
	switch {
	case r.day != nil:
		first, last, anchorFirst, anchorLast, ok := r.days(today, now, ahead)
		if !ok || last.Before(first) {
			return Window{}, r, false
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
		if !starts.IsZero() {
			w.Start = tightenStart(w.Start, starts)
			w.Starts = starts
		}
		w.Label += ", " + clockLabel(r.clock, l)
	}
	if !w.End.After(w.Start) {
		return Window{}, r, false
	}
	// Exclusions: each is kept only if a day of the window is left.
	kept := r.except[:0:0]
	for _, p := range r.except {
		if !hasWeekday(w.Start, w.End, p.except) {
			kept = append(kept, p) // no such day in the window: nothing to leave out
			continue
		}
		except := w.Except | p.except
		if start, end, ok := skipDays(w.Start, w.End, daily, except); ok {
			w.Start, w.End, w.Except = start, end, except
			kept = append(kept, p)
		}
	}
	r.except = kept
	if w.Except != 0 {
		w.Label += ", " + exceptLabel(w.Except, l)
	}
	return w, r, true
}

// skipDays moves start and end off the days in except, keeping them inside
// the daily ranges, and reports false when no time is left.
func skipDays(start, end time.Time, daily ClockRange, except Weekdays) (time.Time, time.Time, bool) {
	open, shut := 0, MinutesPerDay
	if !daily.IsZero() {
		open, shut = daily.Start, daily.End
	}
	for d := DateOf(start); except.Has(d.Weekday()); d = d.AddDays(1) {
		start = d.AddDays(1).At(open)
		if !start.Before(end) {
			return start, end, false
		}
	}
	for {
		d := DateOf(end.Add(-time.Nanosecond))
		if !except.Has(d.Weekday()) {
			break
		}
		end = d.AddDays(-1).At(shut)
		if !end.After(start) {
			return start, end, false
		}
	}
	return start, end, end.After(start)
}

// hasWeekday reports whether a day of [start, end) is in days.
func hasWeekday(start, end time.Time, days Weekdays) bool {
	last := DateOf(end.Add(-time.Nanosecond))
	for i, d := 0, DateOf(start); i < 7 && !d.After(last); i, d = i+1, d.AddDays(1) {
		if days.Has(d.Weekday()) {
			return true
		}
	}
	return false
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

// tightenStart moves start to the next instant a slot may start at, by the
// daily range starts.
func tightenStart(start time.Time, starts ClockRange) time.Time {
	d := DateOf(start)
	if !start.Before(d.At(starts.End)) {
		return d.AddDays(1).At(starts.Start)
	}
	return start
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

// exceptLabel names the days left out: "utom fredag", "except Friday".
func exceptLabel(w Weekdays, l lang) string {
	var names []string
	for _, d := range w.Days() {
		names = append(names, weekdayName(d, l))
	}
	and := pickLang(l, " och ", " and ")
	list := names[len(names)-1]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + and + list
	}
	return pickLang(l, "utom ", "except ") + list
}

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
	case timeAt:
		if en {
			return "starting " + p.starts.String()
		}
		return "start kl. " + p.starts.String()
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
