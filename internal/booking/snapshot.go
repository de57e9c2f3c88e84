package booking

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"time"

	"bokat"
	"bokat/internal/schedule"
)

// snapshot is the supply at one revision, indexed for search. It is never
// modified once built, except for its memo of candidate lists.
type snapshot struct {
	revision int64
	// byService lists, per service id, the active providers offering it,
	// sorted by provider id.
	byService map[string][]*providerEntry

	memoMu sync.Mutex
	memo   map[candidateKey]*candidateList
}

type providerEntry struct {
	supply bokat.ProviderSupply
	hours  schedule.WeeklyHours
	// hoursKey identifies the working hours: providers with equal hours
	// share their day templates (see Search.dayTemplate).
	hoursKey string
	// days holds the hours of single dates that replace the weekly hours
	// (nil for most providers).
	days map[schedule.Date]dayHours
}

// dayHours is a provider's hours of one date, as weekly hours with only
// that date's weekday set, and their key.
type dayHours struct {
	hours schedule.WeeklyHours
	key   string
}

// dayOverrides indexes a provider's hours of single dates.
func dayOverrides(rows []bokat.DayHours) map[schedule.Date]dayHours {
	if len(rows) == 0 {
		return nil
	}
	byDay := map[schedule.Date][]bokat.WorkingRange{}
	for _, r := range rows {
		d, ok := parseDay(r.Day)
		if !ok {
			continue
		}
		if _, seen := byDay[d]; !seen {
			byDay[d] = nil
		}
		if !r.Closed() {
			byDay[d] = append(byDay[d], bokat.WorkingRange{Weekday: d.Weekday(), StartMinute: r.StartMinute, EndMinute: r.EndMinute})
		}
	}
	out := make(map[schedule.Date]dayHours, len(byDay))
	for d, ranges := range byDay {
		out[d] = dayHours{hours: weeklyHours(ranges), key: "day;" + hoursKey(ranges)}
	}
	return out
}

// parseDay reads a date "2026-03-10".
func parseDay(s string) (schedule.Date, bool) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return schedule.Date{}, false
	}
	return schedule.NewDate(t.Year(), t.Month(), t.Day()), true
}

// hoursOn returns the working hours of the entry on date d and their key.
func (e *providerEntry) hoursOn(d schedule.Date) (schedule.WeeklyHours, string) {
	if o, ok := e.days[d]; ok {
		return o.hours, o.key
	}
	return e.hours, e.hoursKey
}

func newSnapshot(s Supply) *snapshot {
	snap := &snapshot{revision: s.Revision, byService: map[string][]*providerEntry{}, memo: map[candidateKey]*candidateList{}}
	for _, p := range s.Providers {
		if !p.Active {
			continue
		}
		e := &providerEntry{supply: p, hours: weeklyHours(p.Hours), hoursKey: hoursKey(p.Hours), days: dayOverrides(p.DayHours)}
		for _, svc := range p.Services {
			snap.byService[svc.ServiceID] = append(snap.byService[svc.ServiceID], e)
		}
	}
	return snap
}

func weeklyHours(hours []bokat.WorkingRange) schedule.WeeklyHours {
	var w schedule.WeeklyHours
	for _, h := range hours {
		w[h.Weekday] = append(w[h.Weekday], schedule.ClockRange{Start: h.StartMinute, End: h.EndMinute})
	}
	return w
}

// hoursKey encodes working hours as a map key.
func hoursKey(hours []bokat.WorkingRange) string {
	b := make([]byte, 0, 16*len(hours))
	for _, h := range hours {
		b = strconv.AppendInt(b, int64(h.Weekday), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(h.StartMinute), 10)
		b = append(b, '-')
		b = strconv.AppendInt(b, int64(h.EndMinute), 10)
		b = append(b, ';')
	}
	return string(b)
}

// candidateKey names the candidates of one search on one day: the
// providers offering the service that cover the postcode (and the
// destination, when the job has one; -1 when not).
type candidateKey struct {
	service               string
	postcode, destination int
	// mode is the realm searched: providers of another are never
	// candidates.
	mode bokat.Mode
	// period is the rotation period of the search (rotationPeriod).
	period string
}

// candidateList is the candidates of a key in walk order (ascending
// rotation hash), with their hashes.
type candidateList struct {
	providers []*providerEntry
	hashes    []uint64
}

// only returns the list of the one candidate of that provider id, or nil
// when c (which may be nil) has none.
func (c *candidateList) only(providerID string) *candidateList {
	if c == nil {
		return nil
	}
	for i, p := range c.providers {
		if p.supply.ID == providerID {
			return &candidateList{providers: c.providers[i : i+1 : i+1], hashes: c.hashes[i : i+1 : i+1]}
		}
	}
	return nil
}

// maxMemo bounds the memo of candidate lists of one snapshot; when it is
// full it starts again empty.
const maxMemo = 4096

// candidates returns the candidates of k in walk order, memoised per
// snapshot: a search then does not scan every provider's coverage.
func (snap *snapshot) candidates(k candidateKey) *candidateList {
	snap.memoMu.Lock()
	c, ok := snap.memo[k]
	snap.memoMu.Unlock()
	if ok {
		return c
	}
	c = snap.computeCandidates(k)
	snap.memoMu.Lock()
	if len(snap.memo) >= maxMemo {
		clear(snap.memo)
	}
	snap.memo[k] = c
	snap.memoMu.Unlock()
	return c
}

func (snap *snapshot) computeCandidates(k candidateKey) *candidateList {
	pc := bokat.PostcodeKey(k.postcode)
	type ranked struct {
		p *providerEntry
		h uint64
	}
	var rs []ranked
	for _, p := range snap.byService[k.service] {
		if p.supply.Mode.Or() != k.mode || p.supply.ID == bokat.TestProviderFollowUpOnly || !p.supply.Covers(k.postcode) || (k.destination >= 0 && !p.supply.Covers(k.destination)) {
			continue
		}
		rs = append(rs, ranked{p, rotationHash(p.supply.ID, k.period, pc)})
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.p.supply.ID, b.p.supply.ID))
	})
	c := &candidateList{providers: make([]*providerEntry, len(rs)), hashes: make([]uint64, len(rs))}
	for i, r := range rs {
		c.providers[i], c.hashes[i] = r.p, r.h
	}
	return c
}
