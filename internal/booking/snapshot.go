package booking

import (
	"cmp"
	"slices"
	"strconv"
	"sync"

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
}

func newSnapshot(s Supply) *snapshot {
	snap := &snapshot{revision: s.Revision, byService: map[string][]*providerEntry{}, memo: map[candidateKey]*candidateList{}}
	for _, p := range s.Providers {
		if !p.Active {
			continue
		}
		e := &providerEntry{supply: p, hours: weeklyHours(p.Hours), hoursKey: hoursKey(p.Hours)}
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
