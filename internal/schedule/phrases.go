package schedule

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// partClass says which question a matched phrase answers.
type partClass int

const (
	classDay    partClass = iota // which day or days ("i morgon", "vecka 50")
	classRel                     // how soon, relative to now ("snarast", "inom en vecka")
	classTime                    // which time of day ("förmiddag", "efter 15")
	classExcept                  // which days not ("men inte fredag", "except Monday")
)

// dayKind distinguishes the phrases of classDay.
type dayKind int

const (
	dayToday dayKind = iota
	dayTomorrow
	dayAfterTomorrow
	dayThisWeek
	dayNextWeek
	dayWeekNumber
	dayWeekend
	dayWeekday
	dayDate
	dayHoliday   // "julafton", "påsk", "midsommar"
	dayMonthSpan // "i december", "nästa månad", "i mitten av december"
	dayWeekPart  // "i slutet av veckan", "early next week"
	dayOffset    // "om två veckor", "in 3 days"
)

// isWeekScope reports whether k names a whole ISO week that a weekday can narrow.
func (k dayKind) isWeekScope() bool {
	return k == dayThisWeek || k == dayNextWeek || k == dayWeekNumber
}

// relKind distinguishes the phrases of classRel.
type relKind int

const (
	relASAP relKind = iota
	relWithin
	relFlexible
)

// relUnit is the unit of "inom N <unit>".
type relUnit int

const (
	unitHour relUnit = iota
	unitDay
	unitWeek
	unitMonth
)

// timeKind distinguishes the phrases of classTime; it selects the label.
type timeKind int

const (
	timeMorning timeKind = iota
	timeAfternoon
	timeEvening
	timeDaytime
	timeAfter
	timeBefore
	timeBetween
	timeAt // a clock time: "kl 10", "at 9am", "10:30"
)

// atTolerance is how long after a clock time ("kl 9") a slot may start:
// "kl 9" is slots starting from 09:00 to 09:59.
const atTolerance = 60

// part is one understood phrase. A day phrase may carry a time of day of its
// own ("i kväll", "tisdagsförmiddag"), so hasTime is independent of class.
type part struct {
	class  partClass
	span   span
	phrase string // as the customer wrote it
	source int    // 0 for the preferred text, 1 for the urgency text

	day       dayKind
	weekday   time.Weekday // dayWeekday
	date      Date         // dayDate
	yearGiven bool         // dayDate, dayWeekNumber
	week      int          // dayWeekNumber
	weekYear  int          // dayWeekNumber when yearGiven

	rel  relKind
	n    int     // relWithin, dayOffset
	unit relUnit // relWithin, dayOffset

	dayOnly   bool         // dayDate without a month ("den 15:e")
	wdHint    time.Weekday // dayDate: the weekday written with it ("fredag den 4:e")
	hasWdHint bool
	hol       *holiday // dayHoliday
	month     time.Month
	which     which   // dayMonthSpan, dayWeekPart
	third     third   // dayMonthSpan, dayWeekPart
	mod       modKind // any day phrase: "före", "efter", "kring"

	hasTime bool
	time    timeKind
	clock   ClockRange
	starts  ClockRange // timeAt: the range slots must start in

	except  Weekdays // classExcept: the days not wanted
	ignored bool     // a phrase read but deliberately not used ("until the 5th")
}

// partOfDay returns the wall-clock range of a named part of the day:
// förmiddag 08–12, eftermiddag 12–17, kväll 17–21, dagtid 08–17.
func partOfDay(k timeKind) ClockRange {
	switch k {
	case timeMorning:
		return ClockRange{Start: 8 * 60, End: 12 * 60}
	case timeAfternoon:
		return ClockRange{Start: 12 * 60, End: 17 * 60}
	case timeEvening:
		return ClockRange{Start: 17 * 60, End: 21 * 60}
	case timeDaytime:
		return ClockRange{Start: 8 * 60, End: 17 * 60}
	}
	return ClockRange{Start: 0, End: MinutesPerDay}
}

// The patterns below run on folded text (lower case, å/ä→a, ö→o) and match
// whole words only; see findAll.
const (
	monthPattern = `januari|january|februari|february|mars|march|april|maj|may|juni|june|juli|july|augusti|august|september|oktober|october|november|december|sept|jan|feb|mar|apr|jun|jul|aug|sep|okt|oct|nov|dec`
	// hourPattern has four groups: hour, minute, a/p, and a word for noon.
	hourPattern = `(?:(\d{1,2})(?:[:.](\d{2}))?(?: ?([ap])\.?m\.?)?|(lunch(?:en|tid)?|noon|midday))`
	klPattern   = `(?:kl(?:ockan|\.)?|at)`
	numPattern  = `\d{1,3}|en|ett|tva|tre|fyra|fem|sex|sju|atta|nio|tio|elva|tolv|tretton|fjorton|femton|tjugo|trettio|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|twenty|thirty`
)

var (
	reISODate  = regexp.MustCompile(`(\d{4})-(\d{1,2})-(\d{1,2})`)
	reDayMonth = regexp.MustCompile(`(\d{1,2})(?::?e|:?a|st|nd|rd|th)? (?:of )?(` + monthPattern + `)\.?(?:,? (\d{4}))?`)
	reMonthDay = regexp.MustCompile(`(` + monthPattern + `)\.? (\d{1,2})(?:st|nd|rd|th)?(?:,? (\d{4}))?`)
	reSlash    = regexp.MustCompile(`(\d{1,2})/(\d{1,2})(?:/(\d{4}))?`)
	reWeekNo   = regexp.MustCompile(`(?:vecka|v\.?|week|wk\.?) ?(\d{1,2})(?:,? (\d{4}))?`)

	reTonight       = regexp.MustCompile(`i ?kvall|tonight|this evening`)
	reThisAfter     = regexp.MustCompile(`i ?eftermiddag|this afternoon`)
	reThisMorning   = regexp.MustCompile(`i ?formiddag|this morning`)
	reAfterTomorrow = regexp.MustCompile(`i ?overmorgon|overmorgon|(?:the )?day after tomorrow`)
	reTomorrow      = regexp.MustCompile(`i ?morgon|i ?morrn|i ?morn|tomorrow|tomorow|tommorow|tommorrow|tmrw`)
	reToday         = regexp.MustCompile(`i ?dag|today`)
	reNextWeek      = regexp.MustCompile(`nasta veckan?|nastkommande vecka|kommande vecka|next week`)
	reThisWeek      = regexp.MustCompile(`denna vecka|den har veckan|i veckan|inom veckan|this week`)
	reWeekend       = regexp.MustCompile(`helgen|helg|veckoslutet|veckoslut|weekends?`)
	reWeekdaySv     = regexp.MustCompile(`(mandag|tisdag|onsdag|torsdag|fredag|lordag|sondag)(?:en|ar(?:na)?)?(?:s?(formiddag|morgon|eftermiddag|kvall)(?:en)?)?`)
	reWeekdayEn     = regexp.MustCompile(`(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?`)

	reASAP     = regexp.MustCompile(`(?:sa|so) (?:snart|fort|snabbt) som mojligt|(?:sa|so) (?:snart|fort) (?:det gar|ni kan)|snarast(?: mojligt)?|snabbast mojligt|fortast mojligt|forsta lediga(?: tid)?|omgaende|akut|bradskande|asap|a\.s\.a\.p\.?|as soon as possible|as soon as you can|earliest possible|first available(?: slot| time)?|urgent(?:ly)?`)
	reWithin   = regexp.MustCompile(`(?:inom|within)(?: (?:de|the))?(?: (?:narmaste|kommande|next|coming))? (` + numPattern + `) (timmar|timme|dygn|dagarna|dagar|dag|veckorna|veckor|vecka|manaderna|manader|manad|hours|hour|days|day|weeks|week|months|month)`)
	reFlexible = regexp.MustCompile(`flexibelt|flexibel|flexible|ingen bradska|no rush|no hurry|nar som helst|any ?time|whenever`)

	reBetween   = regexp.MustCompile(`(mellan|between|fran|from)(?: ` + klPattern + ` ?| )` + hourPattern + `(?: (?:och|and|till|to) | ?- ?)(?:` + klPattern + ` ?)?` + hourPattern)
	reKlRange   = regexp.MustCompile(`(kl)(?:ockan|\.)? ?` + hourPattern + ` ?- ?` + hourPattern)
	reClockSpan = regexp.MustCompile(`()` + `(\d{1,2})[:.](\d{2})()() ?- ?(\d{1,2})[:.](\d{2})()()`)
	reNotBefore = regexp.MustCompile(`(inte fore|inte innan|not before|no earlier than|tidigast)(?: ` + klPattern + ` ?| )` + hourPattern)
	reNotAfter  = regexp.MustCompile(`(inte efter|inte senare an|not after|no later than)(?: ` + klPattern + ` ?| )` + hourPattern)
	reAfter     = regexp.MustCompile(`(efter|fran|after|from)(?: ` + klPattern + ` ?| )` + hourPattern)
	reBefore    = regexp.MustCompile(`(fore|innan|senast|before|by)(?: ` + klPattern + ` ?| )` + hourPattern)
	// A clock time: after "kl"/"klockan"/"at", or alone when written
	// with minutes ("10:30") or am/pm ("9 am"); a bare range of hours
	// ("9–11"). The groups are those of reBetween and reAfter.
	reAt        = regexp.MustCompile(`(kl(?:ockan|\.)?|at|@) ?` + hourPattern)
	reBareClock = regexp.MustCompile(`()` + `(\d{1,2})(?::(\d{2}))?(?: ?([ap])\.?m\.?)?()`)
	reBareRange = regexp.MustCompile(`()` + `(\d{1,2})()()() ?- ?(\d{1,2})()()()`)
	reMorning   = regexp.MustCompile(`formiddag(?:en|arna|ar)?|morgon(?:en)?|morgnar(?:na)?|mornings?`)
	reAfternoon = regexp.MustCompile(`eftermiddag(?:en|arna|ar)?|afternoons?`)
	reEvening   = regexp.MustCompile(`kvall(?:en|arna|ar|stid)?|evenings?`)
	reDaytime   = regexp.MustCompile(`dagtid|under dagen|daytime|during the day`)
)

// rule turns one regular-expression match into a part, or reports that the
// match does not make sense (an impossible date, an hour of 27).
type rule struct {
	re   *regexp.Regexp
	make func(norm string, loc []int) (part, bool)
	// need, when set, lists words of which every match contains at least
	// one; a text without any of them skips the expression, which keeps the
	// large ones (holidays, months) off the common texts.
	need []string
}

// phraseRules is the table of rules, built once: every parse walks it.
var phraseRules = rules()

// rules are tried in this order; a later match that overlaps an earlier
// accepted one is dropped, so "i morgon" is tomorrow and never a morning, and
// "15 december" is a date and never "efter 15".
func rules() []rule {
	fixedDay := func(k dayKind) func(string, []int) (part, bool) {
		return func(string, []int) (part, bool) { return part{class: classDay, day: k}, true }
	}
	todayWith := func(k timeKind) func(string, []int) (part, bool) {
		return func(string, []int) (part, bool) {
			return part{class: classDay, day: dayToday, hasTime: true, time: k, clock: partOfDay(k)}, true
		}
	}
	timeOfDay := func(k timeKind) func(string, []int) (part, bool) {
		return func(string, []int) (part, bool) {
			return part{class: classTime, hasTime: true, time: k, clock: partOfDay(k)}, true
		}
	}
	rel := func(k relKind) func(string, []int) (part, bool) {
		return func(string, []int) (part, bool) { return part{class: classRel, rel: k}, true }
	}
	return []rule{
		{re: reMonthPartSv, make: makeMonthPart(1, 2, 3, 4), need: svThirdWords},
		{re: reMonthPartEn, make: makeMonthPart(1, 2, 3, 4), need: enThirdWords},
		{re: reWeekPart, make: makeWeekPart, need: slices.Concat(svThirdWords, enThirdWords)},
		{re: reWeekPartLoose, make: makeWeekPartLoose, need: []string{"tidigt", "sent", "mitt", "early", "late", "middle"}},
		{re: reISODate, make: makeISODate},
		{re: reDayMonth, make: func(s string, loc []int) (part, bool) {
			return makeDate(group(s, loc, 1), group(s, loc, 2), group(s, loc, 3))
		}},
		{re: reMonthDay, make: func(s string, loc []int) (part, bool) {
			return makeDate(group(s, loc, 2), group(s, loc, 1), group(s, loc, 3))
		}},
		{re: reSlash, make: makeSlashDate},
		{re: reDayOnly, make: makeDayOnly},
		{re: reHoliday, make: makeHoliday, need: holidayWords},
		{re: reMonthWhole, make: makeMonthWhole},
		{re: reMonthRel, make: makeMonthRel, need: []string{"manad", "month"}},
		{re: reWeekAfter, make: func(string, []int) (part, bool) {
			return part{class: classDay, day: dayOffset, n: 2, unit: unitWeek}, true
		}, need: []string{"nasta", "next"}},
		{re: reWeekNo, make: makeWeekNumber},
		{re: reTonight, make: todayWith(timeEvening)},
		{re: reThisAfter, make: todayWith(timeAfternoon)},
		{re: reThisMorning, make: todayWith(timeMorning)},
		{re: reAfterTomorrow, make: fixedDay(dayAfterTomorrow)},
		{re: reTomorrow, make: fixedDay(dayTomorrow)},
		{re: reToday, make: fixedDay(dayToday)},
		{re: reNextWeek, make: fixedDay(dayNextWeek)},
		{re: reThisWeek, make: fixedDay(dayThisWeek)},
		{re: reWeekend, make: fixedDay(dayWeekend)},
		{re: reWeekdaySv, make: makeWeekday},
		{re: reWeekdayEn, make: makeWeekday},
		{re: reNotUrgent, make: rel(relFlexible), need: notUrgentWords},
		{re: reASAP, make: rel(relASAP)},
		{re: reWithin, make: makeWithin},
		{re: reOffset, make: makeOffset, need: []string{"om ", "in "}},
		{re: reFlexible, make: rel(relFlexible)},
		{re: reBetween, make: makeBetween},
		{re: reKlRange, make: makeBetween},
		{re: reClockSpan, make: makeBetween},
		{re: reAfterWork, make: func(string, []int) (part, bool) {
			return clockPart(timeAfter, ClockRange{Start: 17 * 60, End: MinutesPerDay})
		}},
		{re: reNotBefore, make: makeAfter}, // "inte före 9" is from 09:00
		{re: reNotAfter, make: makeBefore},
		{re: reAfter, make: makeAfter},
		{re: reBefore, make: makeBefore},
		{re: reAt, make: makeAt, need: []string{"kl", "at", "@"}},
		{re: reBareRange, make: makeBareRange, need: []string{"-"}},
		{re: reBareClock, make: makeBareClock, need: []string{":", "am", "pm", "a.m", "p.m"}},
		{re: reMorning, make: timeOfDay(timeMorning)},
		{re: reAfternoon, make: timeOfDay(timeAfternoon)},
		{re: reEvening, make: timeOfDay(timeEvening)},
		{re: reDaytime, make: timeOfDay(timeDaytime)},
	}
}

// found is what a text says, whatever the time: its phrases in text order,
// and the fragments no phrase covers.
type found struct {
	parts []part
	rest  []fragment
}

// findParts returns the understood phrases of text in text order, and the
// words between them that are not fillers.
func findParts(text string) found {
	f := fold(text)
	var taken []span
	var parts []part
	for _, r := range phraseRules {
		if len(r.need) > 0 && !slices.ContainsFunc(r.need, func(w string) bool { return strings.Contains(f.norm, w) }) {
			continue
		}
	match:
		for _, loc := range findAll(r.re, f.norm) {
			sp := span{start: loc[0], end: loc[1]}
			for _, t := range taken {
				if t.overlaps(sp) {
					continue match
				}
			}
			p, ok := r.make(f.norm, loc)
			if !ok {
				continue
			}
			p.span, p.phrase = sp, f.original(sp.start, sp.end)
			taken = append(taken, sp)
			parts = append(parts, p)
		}
	}
	// Text order decides between phrases of one class.
	slices.SortFunc(parts, func(a, b part) int { return a.span.start - b.span.start })
	parts = attachPrefixes(f, parts)
	return found{parts: parts, rest: leftover(f, parts)}
}

func makeISODate(s string, loc []int) (part, bool) {
	y, _ := strconv.Atoi(group(s, loc, 1))
	m, _ := strconv.Atoi(group(s, loc, 2))
	d, _ := strconv.Atoi(group(s, loc, 3))
	date := Date{Year: y, Month: time.Month(m), Day: d}
	if !date.Valid() {
		return part{}, false
	}
	return part{class: classDay, day: dayDate, date: date, yearGiven: true}, true
}

// makeDate reads a day number, a month name and an optional year.
func makeDate(day, month, year string) (part, bool) {
	d, _ := strconv.Atoi(day)
	m := monthFromName(month)
	if m == 0 {
		return part{}, false
	}
	return datePart(d, m, year)
}

// makeSlashDate reads "3/12" as 3 December: day first, as in Swedish.
// "24/7" means "around the clock", not 24 July.
func makeSlashDate(s string, loc []int) (part, bool) {
	if s[loc[0]:loc[1]] == "24/7" {
		return part{}, false
	}
	d, _ := strconv.Atoi(group(s, loc, 1))
	m, _ := strconv.Atoi(group(s, loc, 2))
	if m < 1 || m > 12 {
		return part{}, false
	}
	return datePart(d, time.Month(m), group(s, loc, 3))
}

func datePart(d int, m time.Month, year string) (part, bool) {
	p := part{class: classDay, day: dayDate, date: Date{Year: 2000, Month: m, Day: d}} // 2000 is a leap year: 29 February passes
	if year != "" {
		y, _ := strconv.Atoi(year)
		p.date.Year, p.yearGiven = y, true
	}
	if !p.date.Valid() {
		return part{}, false
	}
	return p, true
}

func monthFromName(name string) time.Month {
	switch name {
	case "januari", "january", "jan":
		return time.January
	case "februari", "february", "feb":
		return time.February
	case "mars", "march", "mar":
		return time.March
	case "april", "apr":
		return time.April
	case "maj", "may":
		return time.May
	case "juni", "june", "jun":
		return time.June
	case "juli", "july", "jul":
		return time.July
	case "augusti", "august", "aug":
		return time.August
	case "september", "sept", "sep":
		return time.September
	case "oktober", "october", "okt", "oct":
		return time.October
	case "november", "nov":
		return time.November
	case "december", "dec":
		return time.December
	}
	return 0
}

// reWeekWord ends a text whose last word makes the "vecka" after it a week
// of its own: in "nästa vecka 13-16" the 13 is not a week number.
var reWeekWord = regexp.MustCompile(`(?:^|[^\pL\d])(?:nasta|kommande|nastkommande|denna|har|next|this|coming) $`)

func makeWeekNumber(s string, loc []int) (part, bool) {
	w, _ := strconv.Atoi(group(s, loc, 1))
	if w < 1 || w > 53 || reWeekWord.MatchString(s[:loc[0]]) {
		return part{}, false
	}
	p := part{class: classDay, day: dayWeekNumber, week: w}
	if y := group(s, loc, 2); y != "" {
		p.weekYear, _ = strconv.Atoi(y)
		p.yearGiven = true
	}
	return p, true
}

func makeWeekday(s string, loc []int) (part, bool) {
	wd, ok := weekdayFromName(group(s, loc, 1))
	if !ok {
		return part{}, false
	}
	p := part{class: classDay, day: dayWeekday, weekday: wd}
	switch group(s, loc, 2) { // Swedish compounds: "tisdagsförmiddag"
	case "formiddag", "morgon":
		p.hasTime, p.time = true, timeMorning
	case "eftermiddag":
		p.hasTime, p.time = true, timeAfternoon
	case "kvall":
		p.hasTime, p.time = true, timeEvening
	}
	if p.hasTime {
		p.clock = partOfDay(p.time)
	}
	return p, true
}

// maxWithinDays bounds "inom N dagar" so that a typo cannot ask for a decade.
const maxWithinDays = 366

func makeWithin(s string, loc []int) (part, bool) {
	n := readNumber(group(s, loc, 1))
	var u relUnit
	days := 0
	switch group(s, loc, 2) {
	case "timme", "timmar", "hour", "hours":
		u, days = unitHour, (n+23)/24
	case "dag", "dagar", "dagarna", "dygn", "day", "days":
		u, days = unitDay, n
	case "vecka", "veckor", "veckorna", "week", "weeks":
		u, days = unitWeek, 7*n
	default:
		u, days = unitMonth, 31*n
	}
	if n < 1 || days > maxWithinDays {
		return part{}, false
	}
	return part{class: classRel, rel: relWithin, n: n, unit: u}, true
}

func readNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	words := map[string]int{
		"en": 1, "ett": 1, "a": 1, "an": 1, "one": 1,
		"tva": 2, "two": 2, "tre": 3, "three": 3, "fyra": 4, "four": 4,
		"fem": 5, "five": 5, "sex": 6, "six": 6, "sju": 7, "seven": 7,
		"atta": 8, "eight": 8, "nio": 9, "nine": 9, "tio": 10, "ten": 10,
		"elva": 11, "eleven": 11, "tolv": 12, "twelve": 12, "tretton": 13, "thirteen": 13,
		"fjorton": 14, "fourteen": 14, "femton": 15, "fifteen": 15, "tjugo": 20, "twenty": 20,
		"trettio": 30, "thirty": 30,
	}
	return words[s]
}

// readHour reads the four groups of hourPattern starting at group i into
// minutes after midnight. English phrases read a bare hour from 1 to 6 as
// afternoon ("after 3" is 15:00); Swedish ones use the 24-hour clock.
func readHour(s string, loc []int, i int, english bool) (int, bool) {
	if group(s, loc, i+3) != "" {
		return 12 * 60, true
	}
	h, err := strconv.Atoi(group(s, loc, i))
	if err != nil {
		return 0, false
	}
	m := 0
	if mm := group(s, loc, i+1); mm != "" {
		m, _ = strconv.Atoi(mm)
	}
	if m > 59 {
		return 0, false
	}
	switch group(s, loc, i+2) {
	case "a":
		if h < 1 || h > 12 {
			return 0, false
		}
		h %= 12
	case "p":
		if h < 1 || h > 12 {
			return 0, false
		}
		h = h%12 + 12
	default:
		if english && h >= 1 && h <= 6 {
			h += 12
		}
	}
	minute := h*60 + m
	if minute > MinutesPerDay {
		return 0, false
	}
	return minute, true
}

func isEnglishKeyword(k string) bool {
	switch k {
	case "after", "from", "before", "by", "between", "not before", "no earlier than", "not after", "no later than", "at":
		return true
	}
	return false
}

func clockPart(k timeKind, r ClockRange) (part, bool) {
	if r.Validate() != nil {
		return part{}, false
	}
	return part{class: classTime, hasTime: true, time: k, clock: r}, true
}

func makeAfter(s string, loc []int) (part, bool) {
	start, ok := readHour(s, loc, 2, isEnglishKeyword(group(s, loc, 1)))
	if !ok {
		return part{}, false
	}
	return clockPart(timeAfter, ClockRange{Start: start, End: MinutesPerDay})
}

func makeBefore(s string, loc []int) (part, bool) {
	end, ok := readHour(s, loc, 2, isEnglishKeyword(group(s, loc, 1)))
	if !ok {
		return part{}, false
	}
	return clockPart(timeBefore, ClockRange{Start: 0, End: end})
}

// makeBetween serves three patterns that share a group layout: a keyword
// group, then two hourPattern blocks.
func makeBetween(s string, loc []int) (part, bool) {
	english := isEnglishKeyword(strings.TrimSpace(group(s, loc, 1)))
	start, ok1 := readHour(s, loc, 2, english)
	end, ok2 := readHour(s, loc, 6, english)
	if !ok1 || !ok2 {
		return part{}, false
	}
	return clockPart(timeBetween, ClockRange{Start: start, End: end})
}

// makeAt reads a clock time after "kl", "klockan" or "at": slots starting
// from that time to atTolerance minutes later.
func makeAt(s string, loc []int) (part, bool) {
	t, ok := readHour(s, loc, 2, isEnglishKeyword(group(s, loc, 1)))
	if !ok {
		return part{}, false
	}
	return atPart(t)
}

// makeBareClock reads a clock time written without "kl" or "at"; it must
// have minutes ("10:30") or am/pm ("9 am"), as a bare number is not a time.
func makeBareClock(s string, loc []int) (part, bool) {
	if group(s, loc, 3) == "" && group(s, loc, 4) == "" {
		return part{}, false
	}
	t, ok := readHour(s, loc, 2, false)
	if !ok {
		return part{}, false
	}
	return atPart(t)
}

func atPart(t int) (part, bool) {
	p, ok := clockPart(timeAt, ClockRange{Start: t, End: MinutesPerDay})
	p.starts = ClockRange{Start: t, End: min(t+atTolerance, MinutesPerDay)}
	return p, ok
}

// reNotAfterRange lists what may not follow a bare range of hours for it
// to be a time: "3-4 dagar", "2-3 rum" and "24-26 dec" are not.
var reNotAfterRange = regexp.MustCompile(`^ ?(?:dagar|dag|dygn|veckor|vecka|manader|manad|ar|timmar|timme|tim|h|min|minuter|st|stycken|kr|kronor|sek|personer|pers|rum|fonster|kvm|m2|days|day|weeks|week|months|month|years|year|hours|hour|hrs|minutes|mins|pcs|rooms|people|windows|sqm|` + monthPattern + `)(?:[^\pL\d]|$)`)

// makeBareRange reads a range of whole hours without "kl" ("9–11"), on the
// 24-hour clock, unless a unit follows ("3-4 dagar").
func makeBareRange(s string, loc []int) (part, bool) {
	if reNotAfterRange.MatchString(s[loc[1]:]) {
		return part{}, false
	}
	start, ok1 := readHour(s, loc, 2, false)
	end, ok2 := readHour(s, loc, 6, false)
	if !ok1 || !ok2 {
		return part{}, false
	}
	return clockPart(timeBetween, ClockRange{Start: start, End: end})
}
