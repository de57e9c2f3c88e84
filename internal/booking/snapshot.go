package booking

import (
	"cmp"
	"maps"
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
	// providers counts the active providers.
	providers int
	// byService lists, per service id, the active providers offering it,
	// sorted by provider id.
	byService map[string][]*providerEntry
	// serviceNum numbers the service ids of the providers' offers.
	serviceNum map[string]int

	memoMu sync.Mutex
	memo   map[candidateKey]*candidateList
}

// providerEntry is one active provider as search keeps it: what a search
// reads of it, compactly (a national supply has 50,000 providers and over
// a million offers).
type providerEntry struct {
	provider    bokat.Provider
	postcodes   []bokat.PostcodeRange
	pausedUntil time.Time
	// offers are the provider's services; wide holds them as the supply
	// has them instead when one does not fit an offer.
	offers []offer
	wide   []bokat.ProviderService
	// hours are the weekly working hours, shared by every provider with
	// the same hours; hoursKey identifies them: providers with equal hours
	// also share their day templates (see Search.dayTemplate).
	hours    *schedule.WeeklyHours
	hoursKey string
	// days holds the hours of single dates that replace the weekly hours
	// (nil for most providers).
	days map[schedule.Date]dayHours
}

// offer is a bokat.ProviderService in 24 bytes instead of 80: the service
// as its number in the snapshot's services, amounts as int32 and minutes
// as int16 (the supply format bounds them far below: 10,000,000 SEK, 1,440
// minutes), labour as a percent or -1 when not stated. An offer that does
// not fit is kept as supplied (see newOffer).
type offer struct {
	service                         uint16
	labour                          int8
	price, unitPrice, minimumCharge int32
	fixed, perUnit, minimum         int16
}

// newOffer returns s as an offer of service number n, and whether it
// holds s exactly.
func newOffer(s bokat.ProviderService, n int) (offer, bool) {
	o := offer{service: uint16(n), labour: -1, price: int32(s.PriceSEK), unitPrice: int32(s.UnitPriceSEK),
		minimumCharge: int32(s.MinimumChargeSEK), fixed: int16(s.Duration.FixedMinutes),
		perUnit: int16(s.Duration.MinutesPerUnit), minimum: int16(s.Duration.MinimumMinutes)}
	if s.Labour.Stated {
		o.labour = int8(s.Labour.Percent)
	}
	return o, int(o.service) == n && o.providerService(s.ServiceID) == s
}

// providerService returns o as the offer of service id.
func (o offer) providerService(id string) bokat.ProviderService {
	s := bokat.ProviderService{ServiceID: id, PriceSEK: int64(o.price), UnitPriceSEK: int64(o.unitPrice),
		MinimumChargeSEK: int64(o.minimumCharge), Duration: bokat.DurationOverride{FixedMinutes: int(o.fixed),
			MinutesPerUnit: int(o.perUnit), MinimumMinutes: int(o.minimum)}}
	if o.labour >= 0 {
		s.Labour = bokat.StatedLabour(int(o.labour))
	}
	return s
}

// number returns the number of service id in the snapshot, or -1 when no
// provider offers it.
func (snap *snapshot) number(id string) int {
	if n, ok := snap.serviceNum[id]; ok {
		return n
	}
	return -1
}

// covers reports whether the provider serves the postcode.
func (e *providerEntry) covers(postcode int) bool {
	for _, r := range e.postcodes {
		if r.Contains(postcode) {
			return true
		}
	}
	return false
}

// service returns the provider's offer of the service id, numbered n in
// the snapshot (-1 when no provider offers it).
func (e *providerEntry) service(id string, n int) (bokat.ProviderService, bool) {
	if e.wide != nil {
		return bokat.ProviderSupply{Services: e.wide}.Service(id)
	}
	for _, o := range e.offers {
		if int(o.service) == n {
			return o.providerService(id), true
		}
	}
	return bokat.ProviderService{}, false
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
// The hours are shared (a search reads them only to build a day template
// it has not memoised): they must not be changed.
func (e *providerEntry) hoursOn(d schedule.Date) (*schedule.WeeklyHours, string) {
	if e.days != nil {
		if o, ok := e.days[d]; ok {
			return &o.hours, o.key
		}
	}
	return e.hours, e.hoursKey
}

// newSnapshot indexes the active providers of s.
func newSnapshot(s Supply) *snapshot {
	b := newSnapshotBuilder(nil)
	b.add(s.Providers)
	return b.done(s.Revision)
}

// snapshotBuilder indexes a supply handed to it in runs of providers. What
// repeats across providers is kept once: weekly hours and their keys,
// service ids (as their numbers in the snapshot). Given the snapshot the
// new one replaces, it numbers services as that one does and keeps that
// one's entry of every provider whose supply did not change (entries are
// never modified once built): a reload beside an index in use then holds
// twice only what changed.
type snapshotBuilder struct {
	snap *snapshot
	// from is the previous snapshot until the first run.
	from *snapshot
	// prev are the previous snapshot's entries by provider id.
	prev    map[string]*providerEntry
	byHours map[string]*schedule.WeeklyHours
	// kept counts the entries taken from the previous snapshot.
	kept int
	// ids are the service ids by number (see serviceID).
	ids []string
}

// newSnapshotBuilder returns a builder of the snapshot that replaces prev
// (nil: none). It reads prev at the first run only: a refresh whose supply
// did not move costs nothing here.
func newSnapshotBuilder(prev *snapshot) *snapshotBuilder {
	return &snapshotBuilder{from: prev, snap: &snapshot{byService: map[string][]*providerEntry{},
		memo: map[candidateKey]*candidateList{}, serviceNum: map[string]int{}}, byHours: map[string]*schedule.WeeklyHours{}}
}

// start takes the previous snapshot's numbers, hours and entries.
func (b *snapshotBuilder) start() {
	prev := b.from
	b.from = nil
	if prev == nil {
		return
	}
	b.snap.serviceNum = maps.Clone(prev.serviceNum)
	b.prev = make(map[string]*providerEntry, prev.providers)
	for _, list := range prev.byService {
		for _, e := range list {
			b.prev[e.provider.ID] = e
			b.byHours[e.hoursKey] = e.hours
		}
	}
}

// add indexes a run of providers; the builder keeps parts of the run (the
// providers' postcodes), never modifying them.
func (b *snapshotBuilder) add(run []bokat.ProviderSupply) {
	if b.from != nil {
		b.start()
	}
	// The run's new entries live in one slice of exactly their number:
	// a slice with room to spare would be kept whole by its first entry.
	kept, fresh := make([]*providerEntry, len(run)), 0
	for i := range run {
		if !run[i].Active {
			continue
		}
		if e := b.prev[run[i].ID]; e != nil && b.unchanged(e, &run[i]) {
			kept[i] = e
		} else {
			fresh++
		}
	}
	entries := make([]providerEntry, 0, fresh)
	for i := range run {
		p := &run[i]
		if !p.Active {
			continue
		}
		b.snap.providers++
		if kept[i] != nil {
			b.kept++
			b.list(kept[i])
			continue
		}
		key := hoursKey(p.Hours)
		h, ok := b.byHours[key]
		if !ok {
			w := weeklyHours(p.Hours)
			h = &w
			b.byHours[key] = h
		}
		entries = append(entries, providerEntry{provider: p.Provider, postcodes: p.Postcodes, pausedUntil: p.PausedUntil,
			hours: h, hoursKey: key, days: dayOverrides(p.DayHours)})
		e := &entries[len(entries)-1]
		e.offers = make([]offer, len(p.Services))
		for i, svc := range p.Services {
			if e.offers[i], ok = newOffer(svc, b.number(svc.ServiceID)); !ok {
				e.offers, e.wide = nil, slices.Clone(p.Services)
				break
			}
		}
		b.list(e)
	}
}

// number returns the number of a service id, numbering it when new.
func (b *snapshotBuilder) number(id string) int {
	n, ok := b.snap.serviceNum[id]
	if !ok {
		n = len(b.snap.serviceNum)
		b.snap.serviceNum[id] = n
	}
	return n
}

// list adds e to the lists of the services it offers.
func (b *snapshotBuilder) list(e *providerEntry) {
	if e.wide != nil {
		for _, svc := range e.wide {
			b.number(svc.ServiceID)
			b.snap.byService[svc.ServiceID] = append(b.snap.byService[svc.ServiceID], e)
		}
		return
	}
	for _, o := range e.offers {
		id := b.serviceID(int(o.service))
		b.snap.byService[id] = append(b.snap.byService[id], e)
	}
}

// serviceID returns the id of service number n.
func (b *snapshotBuilder) serviceID(n int) string {
	if b.ids == nil || len(b.ids) != len(b.snap.serviceNum) {
		b.ids = make([]string, len(b.snap.serviceNum))
		for id, k := range b.snap.serviceNum {
			b.ids[k] = id
		}
	}
	return b.ids[n]
}

// unchanged reports whether p is what the previous snapshot's entry e
// holds: e can stand for p in the new snapshot. A provider with hours of
// single dates or offers kept as supplied is built again.
func (b *snapshotBuilder) unchanged(e *providerEntry, p *bokat.ProviderSupply) bool {
	if e.provider != p.Provider || !e.pausedUntil.Equal(p.PausedUntil) || len(p.DayHours) > 0 || e.days != nil ||
		e.wide != nil || len(e.offers) != len(p.Services) || !slices.Equal(e.postcodes, p.Postcodes) ||
		e.hoursKey != hoursKey(p.Hours) {
		return false
	}
	for i, svc := range p.Services {
		n, ok := b.snap.serviceNum[svc.ServiceID]
		if !ok {
			return false
		}
		if o, exact := newOffer(svc, n); !exact || o != e.offers[i] {
			return false
		}
	}
	return true
}

// done returns the snapshot, at the supply revision given.
func (b *snapshotBuilder) done(revision int64) *snapshot {
	b.snap.revision = revision
	for id, list := range b.snap.byService {
		b.snap.byService[id] = slices.Clip(list)
	}
	return b.snap
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
		if p.provider.ID == providerID {
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
		if p.provider.Mode.Or() != k.mode || p.provider.ID == bokat.TestProviderFollowUpOnly || !p.covers(k.postcode) || (k.destination >= 0 && !p.covers(k.destination)) {
			continue
		}
		rs = append(rs, ranked{p, rotationHash(p.provider.ID, k.period, pc)})
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.p.provider.ID, b.p.provider.ID))
	})
	c := &candidateList{providers: make([]*providerEntry, len(rs)), hashes: make([]uint64, len(rs))}
	for i, r := range rs {
		c.providers[i], c.hashes[i] = r.p, r.h
	}
	return c
}
