package schedule

import (
	"fmt"
	"sync"
	"time"
	_ "time/tzdata" // Europe/Stockholm must resolve on hosts without a zone database.

	"github.com/rickar/cal/v2"
	"github.com/rickar/cal/v2/se"
)

// stockholm loads the zone once; a *time.Location is immutable, so sharing it is safe.
var stockholm = sync.OnceValue(func() *time.Location {
	loc, err := time.LoadLocation("Europe/Stockholm")
	if err != nil {
		// Unreachable: the zone database is embedded through time/tzdata.
		panic(fmt.Sprintf("schedule: load Europe/Stockholm: %v", err))
	}
	return loc
})

// Stockholm returns the Europe/Stockholm location. Every wall-clock rule of
// this package (working hours, slot starts, timing phrases, labels) is read in
// this location.
func Stockholm() *time.Location { return stockholm() }

// Date is a civil date in the Swedish calendar, without a time of day or a
// location. The zero Date is not a valid date. Dates are comparable with ==.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf returns the Stockholm calendar date on which the instant t falls.
func DateOf(t time.Time) Date {
	y, m, d := t.In(Stockholm()).Date()
	return Date{Year: y, Month: m, Day: d}
}

// NewDate returns the date y-m-d, normalized the way time.Date normalizes
// (for example 2026-12-32 becomes 2027-01-01).
func NewDate(y int, m time.Month, d int) Date {
	t := time.Date(y, m, d, 12, 0, 0, 0, time.UTC)
	return Date{Year: t.Year(), Month: t.Month(), Day: t.Day()}
}

// civil is d at noon UTC: a stable carrier for calendar arithmetic that no
// DST change can shift to a neighbouring day.
func (d Date) civil() time.Time { return time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC) }

// AddDays returns the date n calendar days after d (before it when n < 0).
func (d Date) AddDays(n int) Date { return NewDate(d.Year, d.Month, d.Day+n) }

// Weekday returns the day of the week of d.
func (d Date) Weekday() time.Weekday { return d.civil().Weekday() }

// ISOWeek returns the ISO 8601 year and week number of d.
func (d Date) ISOWeek() (year, week int) { return d.civil().ISOWeek() }

// Compare returns -1, 0 or +1 when d is before, equal to or after o.
func (d Date) Compare(o Date) int { return d.civil().Compare(o.civil()) }

// Before reports whether d is before o.
func (d Date) Before(o Date) bool { return d.Compare(o) < 0 }

// After reports whether d is after o.
func (d Date) After(o Date) bool { return d.Compare(o) > 0 }

// Valid reports whether d names a real calendar date.
func (d Date) Valid() bool {
	return d.Month >= time.January && d.Month <= time.December && NewDate(d.Year, d.Month, d.Day) == d
}

// String formats d as YYYY-MM-DD.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// At returns the instant at which the Stockholm wall clock shows minute
// (minutes after 00:00, 0 to 1440) on d. The time is built with time.Date in
// the location, so 08:00 is 08:00 local on either side of a DST change; 1440
// is 00:00 of the next day. A wall-clock time that a spring-forward change
// skips resolves to the instant one hour later on the wall clock; one that
// occurs twice in autumn resolves as time.Date resolves it (currently to the
// later occurrence).
func (d Date) At(minute int) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, minute, 0, 0, Stockholm())
}

// atSecond is At with second precision, for slot steps that are not whole minutes.
func (d Date) atSecond(second int64) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, int(second), 0, Stockholm())
}

// dayOff pairs a rule of the holiday library with its Swedish name as it
// reads inside a sentence.
type dayOff struct {
	rule *cal.Holiday
	name string
}

// swedishDaysOff lists the days without work: the public holidays of
// lagen (1989:253) om allmänna helgdagar that can fall on a working day, the
// two Sunday holidays (påskdagen, pingstdagen, absent from se.Holidays), and
// the eves midsommarafton, julafton and nyårsafton, which are not public
// holidays in law but are days off in practice. Date rules come from the
// holiday library; only the names are ours.
func swedishDaysOff() []dayOff {
	return []dayOff{
		{se.Nyarsdagen, "nyårsdagen"},
		{se.TrettondedagJul, "trettondedag jul"},
		{se.Langfredagen, "långfredagen"},
		{se.Paskdagen, "påskdagen"},
		{se.AnnandagPask, "annandag påsk"},
		{se.ForstaMaj, "första maj"},
		{se.KristiHimmelsfardsdag, "Kristi himmelsfärdsdag"},
		{se.Pingstdagen, "pingstdagen"},
		{se.Nationaldagen, "nationaldagen"},
		{se.Midsommarafton, "midsommarafton"},
		{se.Midsommardagen, "midsommardagen"},
		{se.AllaHelgonsDag, "alla helgons dag"},
		{se.Julafton, "julafton"},
		{se.Juldagen, "juldagen"},
		{se.AnnandagJul, "annandag jul"},
		{se.Nyarsafton, "nyårsafton"},
	}
}

// IsNonWorkingDay reports whether d is a Swedish public holiday or one of the
// eves midsommarafton, julafton and nyårsafton, and if so its Swedish name in
// lower case as it reads inside a sentence (for example "långfredagen",
// "Kristi himmelsfärdsdag"). Weekends are not days off by this rule; weekly
// working hours decide those.
func IsNonWorkingDay(d Date) (bool, string) {
	name, ok := daysOffIn(d.Year)[d]
	return ok, name
}

// daysOffByYear memoises daysOffIn: the rules are evaluated once per year
// instead of for every day a slot search walks. It holds results of a pure
// function only, so sharing it is safe.
var daysOffByYear sync.Map // year -> map[Date]string

// daysOffIn returns the days off of a year with their names.
func daysOffIn(year int) map[Date]string {
	if m, ok := daysOffByYear.Load(year); ok {
		return m.(map[Date]string)
	}
	m := map[Date]string{}
	for _, h := range swedishDaysOff() {
		actual, _ := h.rule.Calc(year)
		if actual.IsZero() {
			continue
		}
		// Only the calendar fields are read: the library builds its dates
		// in its own default location, which does not matter here.
		y, mo, day := actual.Date()
		if d := (Date{Year: y, Month: mo, Day: day}); y == year {
			if _, dup := m[d]; !dup {
				m[d] = h.name
			}
		}
	}
	v, _ := daysOffByYear.LoadOrStore(year, m)
	return v.(map[Date]string)
}
