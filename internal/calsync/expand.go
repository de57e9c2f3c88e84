package calsync

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/teambition/rrule-go"
)

// The recurrence rule is parsed with rrule-go (its reading of the RFC 5545
// grammar, bounds checks included) but expanded here: rrule-go's iterator
// walks every period from DTSTART and only stops at a result past UNTIL,
// so a rule no day satisfies (BYMONTH=2;BYMONTHDAY=30) runs to the year
// 9999, and a sub-daily rule whose BYHOUR the interval never reaches loops
// for ever inside one call. Expanding here walks only up to the window's
// end, skips whole periods before it when no COUNT needs them, and stops
// at a budget of examined days, so a hostile rule costs bounded time.

// errUnsupportedRule is returned for rule parts this expander does not
// implement (sub-daily frequencies, BYHOUR/BYMINUTE/BYSECOND, BYWEEKNO,
// BYYEARDAY, BYEASTER); the event then blocks its first occurrence only.
var errUnsupportedRule = errors.New("unsupported recurrence rule")

// errRuleBudget is returned when a rule needs more than the day budget to
// reach the window (a COUNT counted from far in the past).
var errRuleBudget = errors.New("recurrence rule needs too many steps")

// civil is a wall-clock date.
type civil struct {
	y int
	m time.Month
	d int
}

func civilOf(t time.Time) civil {
	y, m, d := t.Date()
	return civil{y, m, d}
}

func (c civil) addDays(n int) civil {
	return civilOf(time.Date(c.y, c.m, c.d+n, 12, 0, 0, 0, time.UTC))
}

func (c civil) before(o civil) bool {
	if c.y != o.y {
		return c.y < o.y
	}
	if c.m != o.m {
		return c.m < o.m
	}
	return c.d < o.d
}

// weekday returns 0 for Monday … 6 for Sunday (rrule-go's numbering).
func (c civil) weekday() int {
	return (int(time.Date(c.y, c.m, c.d, 12, 0, 0, 0, time.UTC).Weekday()) + 6) % 7
}

func daysIn(y int, m time.Month) int { return time.Date(y, m+1, 0, 12, 0, 0, 0, time.UTC).Day() }

// recurrence is a parsed RRULE whose dates the expander produces.
type recurrence struct {
	opt rrule.ROption
}

// parseRule reads the value of an RRULE property. UNTIL without a zone is
// read in loc, the zone of DTSTART.
func parseRule(value string, loc *time.Location) (*recurrence, error) {
	opt, err := rrule.StrToROptionInLocation(value, loc)
	if err != nil {
		return nil, fmt.Errorf("RRULE: %w", err)
	}
	if _, err := rrule.NewRRule(*opt); err != nil { // bounds of every BY part
		return nil, fmt.Errorf("RRULE: %w", err)
	}
	switch opt.Freq {
	case rrule.YEARLY, rrule.MONTHLY, rrule.WEEKLY, rrule.DAILY:
	default:
		return nil, errUnsupportedRule
	}
	if len(opt.Byhour)+len(opt.Byminute)+len(opt.Bysecond)+len(opt.Byweekno)+len(opt.Byyearday)+len(opt.Byeaster) > 0 {
		return nil, errUnsupportedRule
	}
	if opt.Interval < 1 {
		opt.Interval = 1
	}
	if opt.Count < 0 {
		opt.Count = 0
	}
	return &recurrence{opt: *opt}, nil
}

// dates calls yield with the start date of every occurrence of the rule
// whose date is not after last, in order, beginning with start (the date
// of DTSTART, always an occurrence). Occurrences before first may be
// skipped when the rule has no COUNT. until, when not zero, is the last
// instant an occurrence may start (UNTIL), judged by startAt. It examines
// at most *budget days, taking them off *budget, and returns errRuleBudget
// past that.
func (r *recurrence) dates(start, first, last civil, startAt func(civil) time.Time, budget *int, yield func(civil) bool) error {
	o := &r.opt
	if !yield(start) {
		return nil
	}
	emitted := 1
	period := periodOf(o.Freq, start, o.Wkst.Day())
	if o.Count == 0 {
		period = r.skipTo(period, first)
	}
	var cands []civil
	for {
		if last.before(period) {
			return nil
		}
		cands = r.candidates(period, start, cands[:0])
		*budget -= periodLength(o.Freq, period)
		if *budget < 0 {
			return errRuleBudget
		}
		for _, c := range cands {
			if !start.before(c) {
				continue // DTSTART was yielded; earlier dates are not occurrences
			}
			if last.before(c) {
				return nil
			}
			if !o.Until.IsZero() && startAt(c).After(o.Until) {
				return nil
			}
			if !yield(c) {
				return nil
			}
			emitted++
			if o.Count > 0 && emitted >= o.Count {
				return nil
			}
		}
		period = r.next(period)
	}
}

// periodOf returns the first day of the period of freq holding d: the day,
// the week starting on wkst, the month or the year.
func periodOf(freq rrule.Frequency, d civil, wkst int) civil {
	switch freq {
	case rrule.WEEKLY:
		return d.addDays(-((d.weekday() - wkst + 7) % 7))
	case rrule.MONTHLY:
		return civil{d.y, d.m, 1}
	case rrule.YEARLY:
		return civil{d.y, time.January, 1}
	}
	return d
}

func periodLength(freq rrule.Frequency, p civil) int {
	switch freq {
	case rrule.WEEKLY:
		return 7
	case rrule.MONTHLY:
		return daysIn(p.y, p.m)
	case rrule.YEARLY:
		return daysInYear(p.y)
	}
	return 1
}

func daysInYear(y int) int { return time.Date(y, 12, 31, 12, 0, 0, 0, time.UTC).YearDay() }

// next returns the first day of the period INTERVAL periods after p.
func (r *recurrence) next(p civil) civil { return r.advance(p, 1) }

func (r *recurrence) advance(p civil, periods int) civil {
	n := periods * r.opt.Interval
	switch r.opt.Freq {
	case rrule.WEEKLY:
		return p.addDays(7 * n)
	case rrule.MONTHLY:
		return civilOf(time.Date(p.y, p.m+time.Month(n), 1, 12, 0, 0, 0, time.UTC))
	case rrule.YEARLY:
		return civil{p.y + n, time.January, 1}
	}
	return p.addDays(n)
}

// skipTo moves period forward by whole intervals to the last one that
// starts no later than a period before first, so a rule without COUNT is
// not walked from a DTSTART years back.
func (r *recurrence) skipTo(p, first civil) civil {
	margin := periodOf(r.opt.Freq, first, r.opt.Wkst.Day())
	var k int
	switch r.opt.Freq {
	case rrule.DAILY:
		k = daysBetween(p, margin) / r.opt.Interval
	case rrule.WEEKLY:
		k = daysBetween(p, margin) / 7 / r.opt.Interval
	case rrule.MONTHLY:
		k = ((margin.y-p.y)*12 + int(margin.m-p.m)) / r.opt.Interval
	case rrule.YEARLY:
		k = (margin.y - p.y) / r.opt.Interval
	}
	if k <= 1 {
		return p
	}
	return r.advance(p, k-1)
}

func daysBetween(a, b civil) int {
	ta := time.Date(a.y, a.m, a.d, 12, 0, 0, 0, time.UTC)
	tb := time.Date(b.y, b.m, b.d, 12, 0, 0, 0, time.UTC)
	return int(tb.Sub(ta).Hours()+1) / 24
}

// candidates appends, in order, the dates of period p that the rule
// selects (RFC 5545 section 3.3.10: BYMONTH, BYMONTHDAY and BYDAY expand or
// limit by frequency, then BYSETPOS picks among the period's set).
func (r *recurrence) candidates(p civil, start civil, out []civil) []civil {
	o := &r.opt
	n := periodLength(o.Freq, p)
	byDay, byMonthDay := o.Byweekday, o.Bymonthday
	byMonth := o.Bymonth
	// Without BYDAY or BYMONTHDAY the period's date comes from DTSTART.
	if len(byDay) == 0 && len(byMonthDay) == 0 {
		switch o.Freq {
		case rrule.WEEKLY:
			byDay = []rrule.Weekday{weekdayOf(start.weekday())}
		case rrule.MONTHLY:
			byMonthDay = []int{start.d}
		case rrule.YEARLY:
			byMonthDay = []int{start.d}
			if len(byMonth) == 0 {
				byMonth = []int{int(start.m)}
			}
		}
	}
	for i := 0; i < n; i++ {
		d := p.addDays(i)
		if len(byMonth) > 0 && !slices.Contains(byMonth, int(d.m)) {
			continue
		}
		if len(byMonthDay) > 0 && !monthDayMatches(byMonthDay, d) {
			continue
		}
		if len(byDay) > 0 && !r.weekdayMatches(byDay, d, len(byMonth) > 0) {
			continue
		}
		out = append(out, d)
	}
	if len(o.Bysetpos) > 0 && len(out) > 0 {
		picked := make([]civil, 0, len(o.Bysetpos))
		for _, pos := range o.Bysetpos {
			i := pos - 1
			if pos < 0 {
				i = len(out) + pos
			}
			if i >= 0 && i < len(out) && !slices.Contains(picked, out[i]) {
				picked = append(picked, out[i])
			}
		}
		slices.SortFunc(picked, func(a, b civil) int {
			switch {
			case a.before(b):
				return -1
			case b.before(a):
				return 1
			}
			return 0
		})
		out = append(out[:0], picked...)
	}
	return out
}

func weekdayOf(d int) rrule.Weekday {
	return [...]rrule.Weekday{rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA, rrule.SU}[d]
}

func monthDayMatches(days []int, d civil) bool {
	n := daysIn(d.y, d.m)
	for _, md := range days {
		if md == d.d || md < 0 && n+md+1 == d.d {
			return true
		}
	}
	return false
}

// weekdayMatches reports whether d is one of the BYDAY days. An ordinal
// (2TU, -1FR) counts within the month for MONTHLY rules and for YEARLY
// rules with BYMONTH, within the year for other YEARLY rules; DAILY and
// WEEKLY rules carry none that matters.
func (r *recurrence) weekdayMatches(days []rrule.Weekday, d civil, withMonth bool) bool {
	wd := d.weekday()
	for _, w := range days {
		if w.Day() != wd {
			continue
		}
		n := w.N()
		if n == 0 || r.opt.Freq == rrule.DAILY || r.opt.Freq == rrule.WEEKLY {
			return true
		}
		var index, total int
		if r.opt.Freq == rrule.MONTHLY || withMonth {
			index, total = (d.d-1)/7+1, (daysIn(d.y, d.m)-d.d)/7+(d.d-1)/7+1
		} else {
			yd := time.Date(d.y, d.m, d.d, 12, 0, 0, 0, time.UTC).YearDay()
			index, total = (yd-1)/7+1, (daysInYear(d.y)-yd)/7+(yd-1)/7+1
		}
		if n == index || n < 0 && total+n+1 == index {
			return true
		}
	}
	return false
}
