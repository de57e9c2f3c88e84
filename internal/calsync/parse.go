package calsync

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"

	"bokat/internal/schedule"
)

// Rule is a feed's choice of which events make the provider busy.
type Rule string

// The rules. Cancelled events (and cancelled instances) never block.
const (
	// RuleBusyOnly (the default): events shown as busy block; events
	// marked free (TRANSP:TRANSPARENT) do not.
	RuleBusyOnly Rule = "busy_only"
	// RuleEverything: every event that is not cancelled blocks, free ones
	// too.
	RuleEverything Rule = "everything"
	// RuleAllDayBusy: as RuleBusyOnly, and all-day events block even when
	// marked free (calendar applications mark them free by default).
	RuleAllDayBusy Rule = "all_day_busy"
)

// ParseRule reads a rule's name; "" is RuleBusyOnly.
func ParseRule(s string) (Rule, error) {
	switch r := Rule(s); r {
	case "":
		return RuleBusyOnly, nil
	case RuleBusyOnly, RuleEverything, RuleAllDayBusy:
		return r, nil
	}
	return "", fmt.Errorf("calendar rule %q: want %s, %s or %s", s, RuleBusyOnly, RuleEverything, RuleAllDayBusy)
}

// Interval is a busy time [Start, End) in UTC.
type Interval struct {
	Start, End time.Time
}

// Limits of one parse.
const (
	// DefaultMaxBusy bounds the busy times one feed yields in the window.
	DefaultMaxBusy = 20000
	// DefaultDayBudget bounds the days the recurrence rules of one feed
	// may examine together (a daily rule over a 90-day horizon examines
	// about 90).
	DefaultDayBudget = 400000
	// maxDepth bounds the nesting of components (VCALENDAR > VEVENT >
	// VALARM is 3).
	maxDepth = 6
	// maxComponents bounds the components of one feed.
	maxComponents = 200000
	// maxListValues bounds the values of one RDATE, EXDATE or FREEBUSY.
	maxListValues = 2000
)

// ParseOptions configures Parse.
type ParseOptions struct {
	// From and To are the window: only busy times overlapping [From, To)
	// are returned.
	From, To time.Time
	Rule     Rule
	// OwnUIDDomain is the domain of the UIDs Bokat gives its bookings
	// (calfeed.UIDDomain): events with such a UID are Bokat's own bookings
	// coming back and are left out, since they block already.
	OwnUIDDomain string
	// MaxBusy and DayBudget override DefaultMaxBusy and DefaultDayBudget.
	// Once the day budget is spent, the remaining recurring events block
	// their first occurrence only and count as partial.
	MaxBusy, DayBudget int
}

// Parsed is what a feed says about its provider's busy times.
type Parsed struct {
	// Busy are the busy times overlapping the window, sorted, overlapping
	// and touching ones merged.
	Busy []Interval
	// Events counts the events read; Own those that were Bokat's own
	// bookings; Skipped those that could not be understood (no start, a
	// bad date) and so block nothing; Partial those whose repeat rule is
	// not supported or too long, which block their first occurrence and
	// what was expanded; UnknownZones the TZIDs read as Europe/Stockholm.
	Events, Own, Skipped, Partial, UnknownZones int
}

// ErrTooManyBusy is returned when a feed has more busy times in the window
// than the limit.
var ErrTooManyBusy = errors.New("the calendar has too many busy times in the booking horizon")

// ErrMalformed wraps every error of a feed that is not iCalendar.
var ErrMalformed = errors.New("the calendar is not a valid iCalendar feed")

// Parse reads an iCalendar feed (VEVENT and VFREEBUSY components) and
// returns the busy times it gives the provider over the window. It costs
// time and memory bounded by the size of body and the limits: components
// nest at most maxDepth deep, recurrence rules expand only up to the
// window's end within a day budget, and the result holds at most MaxBusy
// intervals (else ErrTooManyBusy). Errors wrap ErrMalformed unless they
// are ErrTooManyBusy.
func Parse(body []byte, o ParseOptions) (Parsed, error) {
	if o.MaxBusy <= 0 {
		o.MaxBusy = DefaultMaxBusy
	}
	if o.DayBudget <= 0 {
		o.DayBudget = DefaultDayBudget
	}
	if o.Rule == "" {
		o.Rule = RuleBusyOnly
	}
	if err := checkShape(body); err != nil {
		return Parsed{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	cal, err := ics.ParseCalendarWithOptions(bytes.NewReader(body), ics.WithUnknownPropertyHandler(ics.AcceptUnknownPropertyHandler))
	if err != nil {
		// The library's message may quote the feed: it is not kept.
		return Parsed{}, ErrMalformed
	}
	p := &parser{opt: o, own: "@" + strings.ToLower(o.OwnUIDDomain)}
	var masters []*ics.VEvent
	overrides := map[string][]int64{} // UID → RECURRENCE-ID instants (ms) of overridden instances
	for _, c := range cal.Components {
		switch c := c.(type) {
		case *ics.VEvent:
			p.out.Events++
			if c.GetProperty(ics.ComponentPropertyRecurrenceId) == nil {
				masters = append(masters, c)
				continue
			}
			if rid, ok := p.moment(c.GetProperty(ics.ComponentPropertyRecurrenceId)); ok {
				uid := propValue(&c.ComponentBase, ics.ComponentPropertyUniqueId)
				overrides[uid] = append(overrides[uid], rid.t.UnixMilli())
			}
			if err := p.event(&c.ComponentBase, nil); err != nil {
				return Parsed{}, err
			}
		case *ics.VBusy:
			if err := p.freeBusy(&c.ComponentBase); err != nil {
				return Parsed{}, err
			}
		}
	}
	for _, m := range masters {
		if err := p.event(&m.ComponentBase, overrides[propValue(&m.ComponentBase, ics.ComponentPropertyUniqueId)]); err != nil {
			return Parsed{}, err
		}
	}
	p.out.UnknownZones = p.zones.unknown
	p.out.Busy = merge(p.busy)
	return p.out, nil
}

// checkShape refuses, before the library builds anything, a body whose
// components nest deeper than maxDepth or number more than maxComponents:
// the library parses nested components by recursion.
func checkShape(body []byte) error {
	depth, count := 0, 0
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		switch {
		case hasPrefixFold(line, "BEGIN:"):
			depth++
			count++
			if depth > maxDepth {
				return fmt.Errorf("components nest deeper than %d", maxDepth)
			}
			if count > maxComponents {
				return fmt.Errorf("more than %d components", maxComponents)
			}
		case hasPrefixFold(line, "END:"):
			depth--
		}
	}
	return nil
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}

type parser struct {
	opt   ParseOptions
	own   string
	zones zones
	busy  []Interval
	out   Parsed
}

// moment is a DTSTART-like value: a wall-clock time in loc, or a date.
type moment struct {
	t    time.Time // in loc; a date is its midnight in Europe/Stockholm
	date bool
}

// moment reads a date or date-time property: UTC ("…Z"), in its TZID, or
// floating (read in Europe/Stockholm), or a date (VALUE=DATE).
func (p *parser) moment(prop *ics.IANAProperty) (moment, bool) {
	if prop == nil {
		return moment{}, false
	}
	return p.parseMoment(strings.TrimSpace(prop.Value), prop.ICalParameters)
}

func (p *parser) parseMoment(v string, params map[string][]string) (moment, bool) {
	loc := schedule.Stockholm()
	if tz := params["TZID"]; len(tz) > 0 {
		loc = p.zones.zone(tz[0])
	}
	switch {
	case len(v) == 8:
		t, err := time.ParseInLocation("20060102", v, schedule.Stockholm())
		return moment{t: t, date: true}, err == nil
	case len(v) == 16 && v[15] == 'Z':
		t, err := time.ParseInLocation("20060102T150405Z", v, time.UTC)
		return moment{t: t}, err == nil
	case len(v) == 15:
		t, err := time.ParseInLocation("20060102T150405", v, loc)
		return moment{t: t}, err == nil
	}
	return moment{}, false
}

func propValue(c *ics.ComponentBase, name ics.ComponentProperty) string {
	if prop := c.GetProperty(name); prop != nil {
		return strings.TrimSpace(prop.Value)
	}
	return ""
}

// length is an event's length: whole days on the wall clock (all-day
// events, DURATION's days and weeks), then an exact duration.
type length struct {
	days  int
	exact time.Duration
}

func (l length) end(start time.Time) time.Time {
	if l.days == 0 {
		return start.Add(l.exact)
	}
	y, m, d := start.Date()
	h, mi, s := start.Clock()
	return time.Date(y, m, d+l.days, h, mi, s, start.Nanosecond(), start.Location()).Add(l.exact)
}

// lengthOf returns the length from start to end: whole days between their
// wall-clock dates in start's zone, then the rest (all-day events).
func lengthOf(start, end time.Time) length {
	end = end.In(start.Location())
	days := daysBetween(civilOf(start), civilOf(end))
	if days < 0 {
		days = 0
	}
	mid := length{days: days}.end(start)
	return length{days: days, exact: end.Sub(mid)}
}

// blocks reports whether an event makes the provider busy under the rule.
func (p *parser) blocks(c *ics.ComponentBase, allDay bool) bool {
	if strings.EqualFold(propValue(c, ics.ComponentPropertyStatus), "CANCELLED") {
		return false
	}
	free := strings.EqualFold(propValue(c, ics.ComponentPropertyTransp), "TRANSPARENT") ||
		strings.EqualFold(propValue(c, "X-MICROSOFT-CDO-BUSYSTATUS"), "FREE")
	switch {
	case !free, p.opt.Rule == RuleEverything:
		return true
	case p.opt.Rule == RuleAllDayBusy:
		return allDay
	}
	return false
}

// event adds the busy times of one event: a single one, an overriding
// instance, or a recurring master whose instances at the instants in
// overridden are replaced by their overrides.
func (p *parser) event(c *ics.ComponentBase, overridden []int64) error {
	if p.opt.OwnUIDDomain != "" && strings.HasSuffix(strings.ToLower(propValue(c, ics.ComponentPropertyUniqueId)), p.own) {
		p.out.Own++
		return nil
	}
	start, ok := p.moment(c.GetProperty(ics.ComponentPropertyDtStart))
	if !ok {
		p.out.Skipped++
		return nil
	}
	ln, ok := p.lengthOf(c, start)
	if !ok {
		p.out.Skipped++
		return nil
	}
	if !p.blocks(c, start.date) {
		return nil
	}
	ex, exDates := p.exdates(c)
	for _, ms := range overridden {
		ex[ms] = true
	}
	add := func(s time.Time, l length) error {
		if ex[s.UnixMilli()] || exDates[civilOf(s)] && start.date {
			return nil
		}
		return p.add(s, l.end(s))
	}
	rr := c.GetProperty(ics.ComponentPropertyRrule)
	if rr == nil {
		if err := add(start.t, ln); err != nil {
			return err
		}
	} else if err := p.recur(start, ln, rr.Value, add); err != nil {
		return err
	}
	return p.rdates(c, start, ln, add)
}

// lengthOf reads DTEND or DURATION; without either a date lasts one day
// and a date-time blocks nothing (RFC 5545 section 3.6.1).
func (p *parser) lengthOf(c *ics.ComponentBase, start moment) (length, bool) {
	if end, ok := p.moment(c.GetProperty(ics.ComponentPropertyDtEnd)); ok {
		if !end.t.After(start.t) {
			return length{}, true // blocks nothing
		}
		if start.date {
			return lengthOf(start.t, end.t), true
		}
		// RFC 5545 section 3.8.5.3: every instance lasts DTEND - DTSTART.
		return length{exact: end.t.Sub(start.t)}, true
	}
	if d := c.GetProperty(ics.ComponentPropertyDuration); d != nil {
		return parseDuration(strings.TrimSpace(d.Value))
	}
	if start.date {
		return length{days: 1}, true
	}
	return length{}, true
}

// parseDuration reads an RFC 5545 duration (P1D, PT1H30M, P1W); weeks and
// days count on the wall clock. Negative durations are refused.
func parseDuration(s string) (length, bool) {
	s = strings.TrimPrefix(s, "+")
	if !strings.HasPrefix(s, "P") || len(s) < 3 || len(s) > 32 {
		return length{}, false
	}
	var l length
	inTime := false
	num := -1
	for _, r := range s[1:] {
		switch {
		case r >= '0' && r <= '9':
			if num < 0 {
				num = 0
			}
			num = num*10 + int(r-'0')
			if num > 100000 {
				return length{}, false
			}
			continue
		case r == 'T' && !inTime && num < 0:
			inTime = true
			continue
		}
		if num < 0 {
			return length{}, false
		}
		switch {
		case r == 'W' && !inTime:
			l.days += 7 * num
		case r == 'D' && !inTime:
			l.days += num
		case r == 'H' && inTime:
			l.exact += time.Duration(num) * time.Hour
		case r == 'M' && inTime:
			l.exact += time.Duration(num) * time.Minute
		case r == 'S' && inTime:
			l.exact += time.Duration(num) * time.Second
		default:
			return length{}, false
		}
		num = -1
	}
	return l, num < 0
}

// exdates returns the excluded instants (ms) and, for all-day events, the
// excluded dates.
func (p *parser) exdates(c *ics.ComponentBase) (map[int64]bool, map[civil]bool) {
	ex, dates := map[int64]bool{}, map[civil]bool{}
	for _, prop := range c.GetProperties(ics.ComponentPropertyExdate) {
		for i, v := range strings.Split(prop.Value, ",") {
			if i >= maxListValues {
				break
			}
			if m, ok := p.parseMoment(strings.TrimSpace(v), prop.ICalParameters); ok {
				ex[m.t.UnixMilli()] = true
				if m.date {
					dates[civilOf(m.t)] = true
				}
			}
		}
	}
	return ex, dates
}

// recur adds the instances of a recurring event. A rule this package does
// not expand, or one over the day budget, leaves the first occurrence and
// what was expanded, and counts the event as partial.
func (p *parser) recur(start moment, ln length, rule string, add func(time.Time, length) error) error {
	loc := start.t.Location()
	r, err := parseRule(rule, loc)
	if err != nil {
		p.out.Partial++
		return add(start.t, ln)
	}
	from := p.opt.From.In(loc)
	firstDay := civilOf(from).addDays(-ln.days - 1)
	last := civilOf(p.opt.To.In(loc))
	h, mi, s := start.t.Clock()
	startAt := func(d civil) time.Time { return time.Date(d.y, d.m, d.d, h, mi, s, 0, loc) }
	var addErr error
	err = r.dates(civilOf(start.t), firstDay, last, startAt, &p.opt.DayBudget, func(d civil) bool {
		addErr = add(startAt(d), ln)
		return addErr == nil
	})
	if addErr != nil {
		return addErr
	}
	if err != nil {
		p.out.Partial++
	}
	return nil
}

// rdates adds the instances an event's RDATE properties name: dates,
// date-times (lasting as the event) or periods (start/end, start/duration).
func (p *parser) rdates(c *ics.ComponentBase, start moment, ln length, add func(time.Time, length) error) error {
	for _, prop := range c.GetProperties(ics.ComponentPropertyRdate) {
		for i, v := range strings.Split(prop.Value, ",") {
			if i >= maxListValues {
				break
			}
			s, l, ok := p.period(strings.TrimSpace(v), prop.ICalParameters, ln)
			if !ok {
				continue
			}
			if s.Equal(start.t) {
				continue // DTSTART is an instance already
			}
			if err := add(s, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// period reads a date, a date-time (lasting def) or a period.
func (p *parser) period(v string, params map[string][]string, def length) (time.Time, length, bool) {
	a, b, isPeriod := strings.Cut(v, "/")
	s, ok := p.parseMoment(a, params)
	if !ok {
		return time.Time{}, length{}, false
	}
	if !isPeriod {
		return s.t, def, true
	}
	if strings.HasPrefix(b, "P") || strings.HasPrefix(b, "+P") {
		l, ok := parseDuration(b)
		return s.t, l, ok
	}
	e, ok := p.parseMoment(b, params)
	if !ok || !e.t.After(s.t) {
		return time.Time{}, length{}, false
	}
	return s.t, length{exact: e.t.Sub(s.t)}, true
}

// freeBusy adds a VFREEBUSY's busy periods (FBTYPE BUSY, BUSY-TENTATIVE,
// BUSY-UNAVAILABLE; FREE blocks nothing), whatever the rule.
func (p *parser) freeBusy(c *ics.ComponentBase) error {
	for _, prop := range c.GetProperties(ics.ComponentPropertyFreebusy) {
		if t := prop.ICalParameters["FBTYPE"]; len(t) > 0 && strings.EqualFold(t[0], "FREE") {
			continue
		}
		for i, v := range strings.Split(prop.Value, ",") {
			if i >= maxListValues {
				break
			}
			s, l, ok := p.period(strings.TrimSpace(v), prop.ICalParameters, length{})
			if !ok {
				p.out.Skipped++
				continue
			}
			if err := p.add(s, l.end(s)); err != nil {
				return err
			}
		}
	}
	return nil
}

// add keeps [start, end) when it overlaps the window.
func (p *parser) add(start, end time.Time) error {
	if !end.After(start) || !end.After(p.opt.From) || !start.Before(p.opt.To) {
		return nil
	}
	if len(p.busy) >= p.opt.MaxBusy {
		return fmt.Errorf("%w (more than %s)", ErrTooManyBusy, strconv.Itoa(p.opt.MaxBusy))
	}
	p.busy = append(p.busy, Interval{Start: start.UTC(), End: end.UTC()})
	return nil
}

// merge sorts intervals and joins overlapping and touching ones.
func merge(in []Interval) []Interval {
	slices.SortFunc(in, func(a, b Interval) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return a.End.Compare(b.End)
	})
	out := in[:0]
	for _, iv := range in {
		if n := len(out); n > 0 && !iv.Start.After(out[n-1].End) {
			if iv.End.After(out[n-1].End) {
				out[n-1].End = iv.End
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}
