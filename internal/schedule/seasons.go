package schedule

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rickar/cal/v2/se"
)

// This file holds the day phrases that name stretches of the calendar
// rather than single days or ISO weeks: holidays ("julafton", "Easter"),
// months and their thirds ("i mitten av december", "early January"), parts
// of a week ("i slutet av veckan"), offsets ("om två veckor", "in 3 days"),
// a day of the month alone ("den 15:e", "the 4th"), and the words that turn
// a day phrase into a window before, after or around it ("före jul", "efter
// nyår", "kring den 15:e").

// holidayNote says how many of a holiday's days are days off (see
// IsNonWorkingDay); the label says so, because no provider works then.
type holidayNote int

const (
	noteNone    holidayNote = iota // working days ("mellandagarna", "valborg")
	noteAllOff                     // every day is a day off ("julafton", "påsk")
	noteSomeOff                    // some days are ("påskveckan")
)

// holiday is a named day or run of days of the Swedish year.
type holiday struct {
	pattern string // folded alternatives, whole words
	sv, en  string // names in labels: "julafton", "Christmas Eve"
	// dates returns the days in year y; nyår starts on 31 December of y.
	dates func(y int) (Date, Date)
	note  holidayNote
}

func fixed(m time.Month, d int, days int) func(int) (Date, Date) {
	return func(y int) (Date, Date) {
		first := Date{Year: y, Month: m, Day: d}
		return first, first.AddDays(days - 1)
	}
}

// easterOffset is a run of days counted from påskdagen of the year.
func easterOffset(from, to int) func(int) (Date, Date) {
	return func(y int) (Date, Date) {
		actual, _ := se.Paskdagen.Calc(y)
		ey, em, ed := actual.Date()
		easter := Date{Year: ey, Month: em, Day: ed}
		return easter.AddDays(from), easter.AddDays(to)
	}
}

// midsummer is midsommarafton plus days more.
func midsummer(from, to int) func(int) (Date, Date) {
	return func(y int) (Date, Date) {
		actual, _ := se.Midsommarafton.Calc(y)
		ay, am, ad := actual.Date()
		eve := Date{Year: ay, Month: am, Day: ad}
		return eve.AddDays(from), eve.AddDays(to)
	}
}

// holidays are tried as one leftmost-longest expression, so "julafton" is
// never read as "jul". "Alla helgons dag" is deliberately absent: it reads
// as nothing (see PHRASES.md).
var holidays = []holiday{
	{`julafton|jul ?afton|christmas eve|xmas eve`, "julafton", "Christmas Eve", fixed(time.December, 24, 1), noteAllOff},
	{`juldagen|juldag|christmas day`, "juldagen", "Christmas Day", fixed(time.December, 25, 1), noteAllOff},
	{`annandag jul|annandagen|boxing day`, "annandag jul", "Boxing Day", fixed(time.December, 26, 1), noteAllOff},
	{`julen|jul|julhelgen|christmas|xmas|x-mas|christmas holidays`, "jul", "Christmas", fixed(time.December, 24, 3), noteAllOff},
	{`mellandagarna|mellandagar|mellandagsveckan|between christmas and new years?|between christmas and new year's`, "mellandagarna", "the days between Christmas and New Year", fixed(time.December, 27, 4), noteNone},
	{`nyarsafton|nyars afton|new years eve|new year's eve`, "nyårsafton", "New Year's Eve", fixed(time.December, 31, 1), noteAllOff},
	{`nyarsdagen|nyarsdag|new years day|new year's day`, "nyårsdagen", "New Year's Day", fixed(time.January, 1, 1), noteAllOff},
	{`nyar|nyaret|nyarshelgen|arsskiftet|nyarsskiftet|new years?|new year's|the turn of the year`, "nyår", "New Year", fixed(time.December, 31, 2), noteAllOff},
	{`in the new year|i nya aret|pa nya aret`, "efter nyår", "after New Year", fixed(time.January, 2, afterWindowDays), noteNone},
	{`trettondagen|trettondag jul|trettondedag jul|trettondedagen|trettonhelgen|epiphany`, "trettondedag jul", "Epiphany", fixed(time.January, 6, 1), noteAllOff},
	{`paskveckan|stilla veckan|holy week`, "påskveckan", "Holy Week", easterOffset(-6, 0), noteSomeOff},
	{`pask|pasken|paskhelgen|easter|easter weekend|easter holidays`, "påsk", "Easter", easterOffset(-2, 1), noteAllOff},
	{`langfredag|langfredagen|good friday`, "långfredagen", "Good Friday", easterOffset(-2, -2), noteAllOff},
	{`paskdagen|easter sunday|easter day`, "påskdagen", "Easter Sunday", easterOffset(0, 0), noteAllOff},
	{`annandag pask|annandagpask|easter monday`, "annandag påsk", "Easter Monday", easterOffset(1, 1), noteAllOff},
	{`kristi himmelsfardsdag|kristi himmelsfard|himmelsfardsdagen|kristihimmelsfard|ascension day`, "Kristi himmelsfärdsdag", "Ascension Day", easterOffset(39, 39), noteAllOff},
	{`pingst|pingsten|pingstdagen|pentecost|whitsun|whit sunday`, "pingstdagen", "Whit Sunday", easterOffset(49, 49), noteAllOff},
	{`valborg|valborgsmassoafton|valborgsafton|walpurgis night|walpurgis`, "valborgsmässoafton", "Walpurgis Night", fixed(time.April, 30, 1), noteNone},
	{`forsta maj|may day`, "första maj", "May Day", fixed(time.May, 1, 1), noteAllOff},
	{`nationaldagen|sveriges nationaldag|national day|swedish national day`, "nationaldagen", "the National Day", fixed(time.June, 6, 1), noteAllOff},
	{`midsommarafton|midsommar afton|midsummer eve|midsummer's eve`, "midsommarafton", "Midsummer Eve", midsummer(0, 0), noteAllOff},
	{`midsommardagen|midsummer day|midsummer's day`, "midsommardagen", "Midsummer Day", midsummer(1, 1), noteAllOff},
	{`midsommar|midsommaren|midsommarhelgen|midsummer|midsummer weekend`, "midsommar", "Midsummer", midsummer(0, 1), noteAllOff},
}

// mustLongest compiles pattern with leftmost-longest matching.
func mustLongest(pattern string) *regexp.Regexp {
	re := regexp.MustCompile(pattern)
	re.Longest()
	return re
}

// holidayWords holds a word of every holiday pattern; see rule.need.
var holidayWords = []string{"jul", "christmas", "xmas", "x-mas", "boxing", "annandag", "mellandag", "nyar", "new year", "tretton",
	"epiphany", "pask", "easter", "holy week", "stilla", "langfredag", "good friday", "himmelsf", "ascension",
	"pingst", "pentecost", "whit", "valborg", "walpurgis", "forsta maj", "may day", "nationaldag",
	"national day", "midsommar", "midsummer", "nya aret", "arsskiftet", "turn of the year"}

var reHoliday = func() *regexp.Regexp {
	alts := make([]string, len(holidays))
	for i, h := range holidays {
		alts[i] = "(" + h.pattern + ")"
	}
	return mustLongest(strings.Join(alts, "|"))
}()

// isStretch reports whether p names several days that a weekday can narrow
// ("tisdag i mitten av december", "onsdag om två veckor", "fredag efter
// nyår"). ISO weeks are narrowed by weekMondays instead; single days are not
// narrowed.
func (p *part) isStretch() bool {
	if p.class != classDay {
		return false
	}
	if p.mod != modNone {
		return true
	}
	switch p.day {
	case dayMonthSpan, dayWeekPart:
		return true
	case dayOffset:
		return p.unit != unitDay
	case dayHoliday:
		first, last := p.hol.dates(2026) // the same length every year
		return first != last
	}
	return false
}

func makeHoliday(s string, loc []int) (part, bool) {
	for i := range holidays {
		if group(s, loc, i+1) != "" {
			return part{class: classDay, day: dayHoliday, hol: &holidays[i]}, true
		}
	}
	return part{}, false
}

// which says which month or week a month or week phrase means.
type which int

const (
	whichNamed    which = iota // a named month ("december")
	whichThis                  // "denna månad", "this week"
	whichNext                  // "nästa månad", "next week"
	whichImplicit              // "månaden", "the week": this one, or the next when this one has passed
)

// third is the part of a month or week a phrase names.
type third int

const (
	thirdWhole  third = iota
	thirdStart        // month: days 1–10; week: Monday–Wednesday
	thirdMiddle       // month: days 11–20; week: Tuesday–Thursday
	thirdEnd          // month: day 21 to the last; week: Thursday–Sunday
)

const (
	fullMonthPattern = `januari|january|februari|february|mars|march|april|maj|may|juni|june|juli|july|augusti|august|september|oktober|october|november|december`
	svThirdPattern   = `(?:i |pa )?(borjan|mitten|slutet) (?:av|pa)`
	enThirdPattern   = `(?:in )?(early|mid|middle of|the middle of|late|end of|the end of|beginning of|the beginning of|start of|the start of)(?: |-)?`
)

// Words of the patterns above; see rule.need.
var (
	svThirdWords   = []string{"borjan", "mitten", "slutet"}
	enThirdWords   = []string{"early", "mid", "late", "end of", "beginning of", "start of"}
	notUrgentWords = []string{"inte", "ej ", "inget", "inga", "brattom", "stress", "urgen", "hurry"}
)

var (
	reMonthPartSv = regexp.MustCompile(svThirdPattern + ` (?:(nasta|kommande|denna|den har) )?(manaden|manad|` + monthPattern + `)\.?(?: (\d{4}))?`)
	reMonthPartEn = regexp.MustCompile(enThirdPattern + `(?:(this|next|the) )?(month|` + monthPattern + `)\.?(?:,? (\d{4}))?`)
	reWeekPart    = regexp.MustCompile(`(?:` + svThirdPattern + `|` + enThirdPattern + `) ?(veckan|denna vecka|den har veckan|nasta vecka|kommande vecka|the week|this week|next week)`)
	// "tidigt i veckan", "early in the week": the week's thirds in words
	// that reWeekPart does not take.
	reWeekPartLoose = regexp.MustCompile(`(tidigt|sent|mitt|early|late|in the middle of|the middle of|middle of)(?: (?:i|pa|in|on))? (veckan|denna vecka|den har veckan|nasta vecka|kommande vecka|the week|this week|next week)`)
	reMonthWhole    = regexp.MustCompile(`(?:i|under|hela|in|during|all of) (` + fullMonthPattern + `)(?:,? (\d{4}))?`)
	reMonthRel      = regexp.MustCompile(`(nasta|kommande|nastkommande|denna|den har|next|this|the coming) (?:manaden|manad|month)|senare (?:i|under) manaden|later this month|later in the month`)
	reOffset        = regexp.MustCompile(`(?:om|in)(?: (?:ca\.?|cirka|ungefar|about|around|roughly))? (` + numPattern + `|ett par|a couple of|a couple|couple of) (dagar|dag|dygn|veckor|vecka|manader|manad|days|day|weeks|week|months|month)`)
	reWeekAfter     = regexp.MustCompile(`veckan efter nasta|nastnasta vecka|(?:the )?week after next`)
	reDayOnly       = regexp.MustCompile(`den (\d{1,2})(?::?e|:?a)?|the (\d{1,2})(?:st|nd|rd|th)|(\d{1,2})(?::e|:a|st|nd|rd|th)`)
	reAfterWork     = regexp.MustCompile(`efter (?:jobbet|arbetet|jobbtid|arbetstid)|after work(?:ing hours)?`)
	reNotUrgent     = regexp.MustCompile(`(?:inte|ej|inget|inga) (?:sa |sarskilt )?(?:akut|bradskande|bradskt)|inte brattom|ingen brattom|ingen stress|not urgent|no urgency|not in a hurry|no stress`)

	// Prefixes looked for just before a day phrase.
	reWeekdayPrefix = regexp.MustCompile(`(?:^|[^\pL\d])(mandag|tisdag|onsdag|torsdag|fredag|lordag|sondag|tis|ons|tors|fre|lor|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:en)?\.?,? (?:(?:den|the|d\.) )?$`)
	reModPrefix     = regexp.MustCompile(`(?:^|[^\pL\d])(inte fore|inte innan|not before|inte efter|not after|dagen fore|dagen innan|(?:the )?day before|dagen efter|(?:the )?day after|fore|innan|before|prior to|senast till|senast|by|no later than|efter|after|kring|runt|omkring|ungefar|cirka|around|fran och med|fr\.o\.m\.?|fran|from|starting|starting from|tidigast|at the earliest on|earliest on)(?: (?:den|the))? $`)
	reNotPrefix     = regexp.MustCompile(`(?:^|[^\pL\d])((?:inte|ej|utom|forutom|not|except|but not|other than)(?: (?:pa|on|den|the|i|in|under|during|at))?(?: the)? )$`)
	// reAlsoNot ends a text whose exclusion a weekday after it continues:
	// "utom måndag och fredag", "not Monday or Friday".
	reAlsoNot     = regexp.MustCompile(`^(?:,? (?:och|eller|and|or|nor|&)|,) (?:(?:inte|ej|not|pa|on|the) )?$`)
	reUntilPrefix = regexp.MustCompile(`(?:^|[^\pL\d])((?:until|up until|tills|till och med|t\.o\.m\.?|fram till)(?: (?:pa|on|den|the|i|in))? )$`)
)

func makeMonthPart(thirdGroup, relGroup, monthGroup, yearGroup int) func(string, []int) (part, bool) {
	return func(s string, loc []int) (part, bool) {
		p := part{class: classDay, day: dayMonthSpan, third: thirdOf(group(s, loc, thirdGroup))}
		p.which = whichOf(group(s, loc, relGroup), group(s, loc, monthGroup))
		if p.which == whichNamed {
			p.month = monthFromName(group(s, loc, monthGroup))
			if p.month == 0 {
				return part{}, false
			}
		}
		if y := group(s, loc, yearGroup); y != "" {
			if p.which != whichNamed {
				return part{}, false
			}
			p.date.Year, _ = strconv.Atoi(y)
			p.yearGiven = true
		}
		return p, true
	}
}

func thirdOf(word string) third {
	switch word {
	case "borjan", "tidigt", "early", "beginning of", "the beginning of", "start of", "the start of":
		return thirdStart
	case "mitten", "mitt", "in the middle of", "mid", "middle of", "the middle of":
		return thirdMiddle
	case "slutet", "sent", "late", "end of", "the end of":
		return thirdEnd
	}
	return thirdWhole
}

// whichOf reads the qualifier and noun of a month or week phrase.
func whichOf(rel, noun string) which {
	switch rel {
	case "nasta", "kommande", "nastkommande", "next", "the coming":
		return whichNext
	case "denna", "den har", "this":
		return whichThis
	}
	switch noun {
	case "manaden", "manad", "month", "veckan", "the week", "":
		return whichImplicit
	case "denna vecka", "den har veckan", "this week":
		return whichThis
	case "nasta vecka", "kommande vecka", "next week":
		return whichNext
	}
	return whichNamed
}

func makeWeekPart(s string, loc []int) (part, bool) {
	t := thirdOf(group(s, loc, 1))
	if t == thirdWhole {
		t = thirdOf(group(s, loc, 2))
	}
	return part{class: classDay, day: dayWeekPart, third: t, which: whichOf("", group(s, loc, 3))}, true
}

func makeWeekPartLoose(s string, loc []int) (part, bool) {
	return part{class: classDay, day: dayWeekPart, third: thirdOf(group(s, loc, 1)), which: whichOf("", group(s, loc, 2))}, true
}

func makeMonthWhole(s string, loc []int) (part, bool) {
	p := part{class: classDay, day: dayMonthSpan, which: whichNamed, month: monthFromName(group(s, loc, 1))}
	if y := group(s, loc, 2); y != "" {
		p.date.Year, _ = strconv.Atoi(y)
		p.yearGiven = true
	}
	return p, p.month != 0
}

func makeMonthRel(s string, loc []int) (part, bool) {
	w := whichOf(group(s, loc, 1), "month")
	if w == whichImplicit { // "senare i månaden", "later this month"
		w = whichThis
	}
	return part{class: classDay, day: dayMonthSpan, which: w}, true
}

// Bounds of "om N ...": about a year.
const (
	maxOffsetDays   = 366
	maxOffsetWeeks  = 52
	maxOffsetMonths = 12
)

func makeOffset(s string, loc []int) (part, bool) {
	n := readNumber(group(s, loc, 1))
	switch group(s, loc, 1) {
	case "ett par", "a couple of", "a couple", "couple of":
		n = 2
	}
	p := part{class: classDay, day: dayOffset, n: n}
	limit := maxOffsetDays
	switch group(s, loc, 2) {
	case "dag", "dagar", "dygn", "day", "days":
		p.unit = unitDay
	case "vecka", "veckor", "week", "weeks":
		p.unit, limit = unitWeek, maxOffsetWeeks
	default:
		p.unit, limit = unitMonth, maxOffsetMonths
	}
	return p, n >= 1 && n <= limit
}

func makeDayOnly(s string, loc []int) (part, bool) {
	for g := 1; g <= 3; g++ {
		if v := group(s, loc, g); v != "" {
			d, _ := strconv.Atoi(v)
			p := part{class: classDay, day: dayDate, dayOnly: true, date: Date{Day: d}}
			return p, d >= 1 && d <= 31
		}
	}
	return part{}, false
}

// modKind turns a day phrase into a window relative to it.
type modKind int

const (
	modNone      modKind = iota
	modBefore            // "före jul": from now to the day before
	modBy                // "senast fredag": from now to the end of the day
	modAfter             // "efter nyår": the 14 days after
	modFrom              // "från den 10:e": 14 days from the day
	modAround            // "kring den 15:e": two days either side
	modDayBefore         // "dagen före julafton": that one day
	modDayAfter          // "the day after Boxing Day": that one day
)

// Lengths of the windows of modAfter, modFrom and modAround, in days.
const (
	afterWindowDays = 14
	aroundDays      = 2
)

func modOf(word string) modKind {
	switch word {
	case "fore", "innan", "before", "prior to":
		return modBefore
	case "senast", "by", "no later than":
		return modBy
	case "efter", "after":
		return modAfter
	case "inte fore", "inte innan", "not before", "tidigast":
		return modFrom
	case "inte efter", "not after", "senast till":
		return modBy
	case "dagen fore", "dagen innan", "the day before", "day before":
		return modDayBefore
	case "dagen efter", "the day after", "day after":
		return modDayAfter
	case "kring", "runt", "omkring", "ungefar", "cirka", "around":
		return modAround
	}
	return modFrom
}

// attachPrefixes joins a weekday written just before a date ("fredag den
// 4:e", "Fri Dec 4") to the date, and a word like "före" or "after" written
// just before a day phrase to that phrase, dropping parts the longer phrase
// now covers. A weekday or weekend after "inte", "utom" or "not" becomes an
// exclusion; any other day phrase after those words or after "until" is
// marked ignored, and so is a negated weekday with a part of the day ("inte
// fredag eftermiddag"), which takes that part of the day along. parts are
// in text order.
func attachPrefixes(f folded, parts []part) []part {
	var drop []span
	gone := map[int]bool{}
	for i := range parts {
		p := &parts[i]
		if p.class != classDay {
			continue
		}
		if p.day == dayDate {
			if loc := reWeekdayPrefix.FindStringSubmatchIndex(f.norm[:p.span.start]); loc != nil {
				wd, _ := weekdayFromName(f.norm[loc[2]:loc[3]])
				p.wdHint, p.hasWdHint = wd, true
				drop = append(drop, span{loc[2], p.span.start})
				p.span.start = loc[2]
			}
		}
		if loc := reModPrefix.FindStringSubmatchIndex(f.norm[:p.span.start]); loc != nil {
			p.mod = modOf(f.norm[loc[2]:loc[3]])
			drop = append(drop, span{loc[2], p.span.start})
			p.span.start = loc[2]
		} else if days, ok := exceptDays(p); ok && i > 0 && parts[i-1].class == classExcept &&
			reAlsoNot.MatchString(f.norm[parts[i-1].span.end:p.span.start]) {
			*p = part{class: classExcept, except: days, span: p.span}
		} else if loc := reNotPrefix.FindStringSubmatchIndex(f.norm[:p.span.start]); loc != nil {
			// "helst inte måndag", "utom onsdag", "not on Friday": the
			// customer names a day they do not want. A weekday or the
			// weekend is left out of the window; any other day phrase
			// ("not this week") answers nothing and is reported unused.
			next := i + 1
			withTime := next < len(parts) && parts[next].class == classTime &&
				strings.TrimSpace(f.norm[p.span.end:parts[next].span.start]) == ""
			if days, ok := exceptDays(p); ok && !withTime {
				*p = part{class: classExcept, except: days, span: span{loc[2], p.span.end}}
			} else if withTime {
				// "inte fredag eftermiddag" leaves out only part of a
				// day, which a window cannot say: neither phrase is used.
				p.ignored, p.span = true, span{loc[2], parts[next].span.end}
				gone[next] = true
			} else {
				p.ignored, p.span.start = true, loc[2]
			}
		} else if loc := reUntilPrefix.FindStringSubmatchIndex(f.norm[:p.span.start]); loc != nil {
			// "Until the 5th" may mean before it ("we can wait until") or
			// after it ("we are away until"): the phrase answers nothing
			// and is reported unused.
			p.ignored, p.span.start = true, loc[2]
		}
		p.phrase = f.original(p.span.start, p.span.end)
	}
	out := parts[:0]
	for i, p := range parts {
		covered := gone[i]
		for _, d := range drop {
			if d.overlaps(p.span) && (p.span.end <= d.end) {
				covered = true
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out
}

func weekdayFromName(name string) (time.Weekday, bool) {
	switch name {
	case "sondag", "son", "sunday", "sun":
		return time.Sunday, true
	case "mandag", "man", "monday", "mon":
		return time.Monday, true
	case "tisdag", "tis", "tuesday", "tue", "tues":
		return time.Tuesday, true
	case "onsdag", "ons", "wednesday", "wed":
		return time.Wednesday, true
	case "torsdag", "tors", "tor", "thursday", "thu", "thur", "thurs":
		return time.Thursday, true
	case "fredag", "fre", "friday", "fri":
		return time.Friday, true
	case "lordag", "lor", "saturday", "sat":
		return time.Saturday, true
	}
	return 0, false
}

// monthRange returns the days of third t of month m of year y.
func monthRange(y int, m time.Month, t third) (Date, Date) {
	start := NewDate(y, m, 1)
	y, m = start.Year, start.Month
	last := NewDate(y, m+1, 0).Day
	switch t {
	case thirdStart:
		return Date{y, m, 1}, Date{y, m, 10}
	case thirdMiddle:
		return Date{y, m, 11}, Date{y, m, 20}
	case thirdEnd:
		return Date{y, m, 21}, Date{y, m, last}
	}
	return Date{y, m, 1}, Date{y, m, last}
}

// weekRange returns the days of third t of the week starting on monday.
func weekRange(monday Date, t third) (Date, Date) {
	switch t {
	case thirdStart:
		return monday, monday.AddDays(2)
	case thirdMiddle:
		return monday.AddDays(1), monday.AddDays(3)
	case thirdEnd:
		return monday.AddDays(3), monday.AddDays(6)
	}
	return monday, monday.AddDays(6)
}

// seasonDays is reading.anchor for the kinds of this file: the first
// occurrence for which keep holds.
func seasonDays(p *part, today Date, keep func(first, last Date) bool) (Date, Date, bool) {
	monthStart := Date{today.Year, today.Month, 1}
	switch p.day {
	case dayHoliday:
		for y := today.Year - 1; y <= today.Year+1; y++ {
			if first, last := p.hol.dates(y); keep(first, last) {
				return first, last, true
			}
		}
	case dayMonthSpan:
		var starts []Date
		switch p.which {
		case whichThis:
			starts = []Date{monthStart}
		case whichNext:
			starts = []Date{NewDate(today.Year, today.Month+1, 1)}
		case whichImplicit:
			starts = []Date{monthStart, NewDate(today.Year, today.Month+1, 1)}
		default:
			if p.yearGiven {
				starts = []Date{{p.date.Year, p.month, 1}}
			} else {
				starts = []Date{{today.Year, p.month, 1}, {today.Year + 1, p.month, 1}}
			}
		}
		for _, s := range starts {
			if first, last := monthRange(s.Year, s.Month, p.third); keep(first, last) {
				return first, last, true
			}
		}
	case dayWeekPart:
		monday := today.AddDays(1 - isoWeekday(today))
		mondays := []Date{monday, monday.AddDays(7)}
		switch p.which {
		case whichThis:
			mondays = mondays[:1]
		case whichNext:
			mondays = mondays[1:]
		}
		for _, m := range mondays {
			if first, last := weekRange(m, p.third); keep(first, last) {
				return first, last, true
			}
		}
	case dayOffset:
		var first, last Date
		switch p.unit {
		case unitDay:
			first = today.AddDays(p.n)
			last = first
		case unitWeek:
			d := today.AddDays(7 * p.n)
			first, last = weekRange(d.AddDays(1-isoWeekday(d)), thirdWhole)
		default:
			first, last = monthRange(today.Year, today.Month+time.Month(p.n), thirdWhole)
		}
		return first, last, keep(first, last)
	case dayDate: // a day of the month alone: the next such day within 14 months
		for _, hint := range []bool{p.hasWdHint, false} {
			for i := 0; i < 14; i++ {
				m := NewDate(today.Year, today.Month+time.Month(i), 1)
				d := Date{m.Year, m.Month, p.date.Day}
				if d.Valid() && !d.Before(today) && keep(d, d) && (!hint || d.Weekday() == p.wdHint) {
					return d, d, true
				}
			}
		}
	}
	return Date{}, Date{}, false
}

// seasonLabel names the days of the kinds of this file; first is already
// clipped to today.
func seasonLabel(p *part, first, last Date, l lang) string {
	switch p.day {
	case dayHoliday:
		return capitalize(holidayName(p.hol, l)) + ", " + dateRange(first, last, l) + holidayNoteText(p.hol, first, last, l)
	case dayMonthSpan:
		name := monthName(last.Month, l)
		var head string
		switch {
		case p.third == thirdStart:
			head = pickLang(l, "I början av "+name, "Early "+name)
		case p.third == thirdMiddle:
			head = pickLang(l, "I mitten av "+name, "Mid-"+name)
		case p.third == thirdEnd:
			head = pickLang(l, "I slutet av "+name, "Late "+name)
		case p.which == whichNext:
			head = pickLang(l, "Nästa månad ("+name+")", "Next month ("+name+")")
		case p.which == whichThis:
			head = pickLang(l, "Denna månad ("+name+")", "This month ("+name+")")
		default:
			head = pickLang(l, "I "+name, "In "+name)
		}
		return head + ", " + dateRange(first, last, l)
	case dayWeekPart:
		_, wk := last.ISOWeek()
		n := strconv.Itoa(wk)
		head := map[third][2]string{
			thirdStart:  {"I början av vecka " + n, "Early in week " + n},
			thirdMiddle: {"I mitten av vecka " + n, "Midweek, week " + n},
			thirdEnd:    {"I slutet av vecka " + n, "Late in week " + n},
		}[p.third][l]
		return head + ", " + dateRange(first, last, l)
	case dayOffset:
		units := map[relUnit][2][2]string{
			unitDay:   {{"en dag", "dagar"}, {"a day", "days"}},
			unitWeek:  {{"en vecka", "veckor"}, {"a week", "weeks"}},
			unitMonth: {{"en månad", "månader"}, {"a month", "months"}},
		}[p.unit][l]
		amount := units[0]
		if p.n != 1 {
			amount = strconv.Itoa(p.n) + " " + units[1]
		}
		head := pickLang(l, "Om "+amount, "In "+amount)
		switch p.unit {
		case unitWeek:
			_, wk := last.ISOWeek()
			head += " (" + pickLang(l, "vecka ", "week ") + strconv.Itoa(wk) + ")"
		case unitMonth:
			head += " (" + monthName(last.Month, l) + ")"
		}
		return head + ", " + dateRange(first, last, l)
	}
	return capitalize(dateRange(first, last, l))
}

func pickLang(l lang, sv, en string) string {
	if l == english {
		return en
	}
	return sv
}

func holidayName(h *holiday, l lang) string { return pickLang(l, h.sv, h.en) }

// holidayNoteText says that a holiday's days are days off, in the label.
func holidayNoteText(h *holiday, first, last Date, l lang) string {
	switch h.note {
	case noteAllOff:
		if first == last {
			return pickLang(l, " (helgdag)", " (a holiday in Sweden)")
		}
		return pickLang(l, " (helgdagar)", " (holidays in Sweden)")
	case noteSomeOff:
		return pickLang(l, " (med helgdagar)", " (includes holidays in Sweden)")
	}
	return ""
}

// modLabel describes a window before, after or around an anchor: the
// holiday's name, or the anchor's day the window starts or ends next to.
func modLabel(r reading, first, last, anchorFirst, anchorLast Date, l lang) string {
	words := map[modKind][2]string{
		modBefore:    {"Före", "Before"},
		modBy:        {"Senast", "By"},
		modAfter:     {"Efter", "After"},
		modFrom:      {"Från", "From"},
		modAround:    {"Kring", "Around"},
		modDayBefore: {"Dagen före", "The day before"},
		modDayAfter:  {"Dagen efter", "The day after"},
	}
	var anchor string
	switch r.day.mod {
	case modBefore, modFrom, modDayBefore:
		anchor = longDate(anchorFirst, l)
	case modAround:
		anchor = dateRange(anchorFirst, anchorLast, l)
	default:
		anchor = longDate(anchorLast, l)
	}
	if r.day.day == dayHoliday {
		anchor = holidayName(r.day.hol, l)
	}
	return words[r.day.mod][l] + " " + anchor + ", " + dateRange(first, last, l)
}

// exceptDays returns the days of the week a day phrase after "inte" or
// "not" leaves out: a weekday ("fredag", "Fridays") or the weekend. A
// weekday with a part of the day ("fredagskväll") or any other day phrase
// is not an exclusion.
func exceptDays(p *part) (Weekdays, bool) {
	switch {
	case p.day == dayWeekday && !p.hasTime && p.mod == modNone:
		return WeekdaysOf(p.weekday), true
	case p.day == dayWeekend && p.mod == modNone:
		return WeekdaysOf(time.Saturday, time.Sunday), true
	}
	return 0, false
}
