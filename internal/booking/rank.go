package booking

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"bokat/internal/schedule"
)

// Ranking: which of the free slots a search returns. One pure function,
// rankOptions, decides for the indexed search and for the brute-force
// reference of the tests alike; they differ only in how they find the
// slots it asks for. The rule (also in docs/decisions.md, "Search at
// scale"):
//
//  1. Candidates are walked in the rotation of the search's quarter-hour:
//     ascending rotationHash(provider, rotationPeriod — the Stockholm
//     quarter-hour of the search —, postcode). The sample is the first
//     `sample` candidates (MaxOptions) that have a free slot in the window;
//     the others are not looked at.
//  2. Among the sample, a provider ranks before another when it has fewer
//     bookings overlapping the window, then by the rotation.
//  3. Time is cut into buckets: Stockholm date × part of day (before
//     12:00, 12:00–17:00, from 17:00, by the slot's start). The first pass
//     walks the buckets in time order and takes one option per bucket: of
//     the sample's slots in it, the one whose provider has the fewest
//     options so far, then the earliest start, then the better-ranked
//     provider.
//  4. When every bucket has been passed and places remain, later passes
//     walk the buckets again, one more option per bucket and pass,
//     preferring a start instant not yet offered, then a provider with
//     fewer options, then the earliest start, then the better-ranked
//     provider.
//  5. No provider gets more than maxPer options, nobody more than maxTotal
//     in all; the options are returned sorted by start (then rank).
//
// Price plays no part: the options of one job are all fixed prices of the
// same catalog service, and ranking by price would hand every search to the
// cheapest provider, which is exactly the starvation the rotation prevents;
// the assistant shows each option's price and the user chooses.

// rankInput is what rankOptions asks about the candidates, which are
// numbered 0..candidates()-1 in walk order (ascending rotation hash).
type rankInput interface {
	candidates() int
	// hash is candidate i's rotation hash.
	hash(i int) uint64
	// bookings is how many bookings of candidate i overlap the window.
	bookings(i int) int
	// slots returns candidate i's free slots on the day-th day of the
	// window, sorted by start. rankOptions asks only for the days it needs,
	// so an implementation may compute them lazily.
	slots(i, day int) []rankSlot
	// free reports whether candidate i has a free slot on any of the first
	// days of the window: whether slots(i, d) is non-empty for some d.
	// rankOptions asks it of every candidate it walks past, so it should
	// cost little for a candidate without one.
	free(i, days int) bool
}

// rankSlot is a free slot as the ranking sees it: its bounds in Unix
// milliseconds and the part of the day it starts in. It holds no pointer,
// so the many slots a search computes are nothing to the garbage
// collector.
type rankSlot struct {
	start, end int64
	part       int
}

// newRankSlot returns iv as a rankSlot.
func newRankSlot(iv schedule.Interval) rankSlot {
	return rankSlot{start: iv.Start.UnixMilli(), end: iv.End.UnixMilli(), part: partOfDay(iv.Start)}
}

// interval returns the slot as an interval of UTC instants.
func (s rankSlot) interval() schedule.Interval {
	return schedule.Interval{Start: time.UnixMilli(s.start).UTC(), End: time.UnixMilli(s.end).UTC()}
}

// rankPick is one chosen option: a candidate and one of its slots.
type rankPick struct {
	cand int
	slot rankSlot
}

// Parts of the day of the ranking's buckets.
const (
	partMorning = iota
	partAfternoon
	partEvening
	partsPerDay
)

// partOfDay returns the part of the day a slot starting at t belongs to.
func partOfDay(t time.Time) int {
	switch h := t.In(schedule.Stockholm()).Hour(); {
	case h < 12:
		return partMorning
	case h < 17:
		return partAfternoon
	}
	return partEvening
}

// rankOptions chooses at most maxTotal options, at most maxPer per
// candidate, from the free slots of the first `sample` candidates that
// have any, over `days` days; see the rule above, whose steps it takes in
// turn. (The steps take the candidates and the sample as arguments rather
// than in one struct: the compiler then keeps a small sample off the heap.)
func rankOptions(in rankInput, days, sample, maxPer, maxTotal int) []rankPick {
	// Step 1: the sample.
	var ms rankMembers
	for i := 0; i < in.candidates() && len(ms) < sample; i++ {
		if in.free(i, days) {
			ms = append(ms, rankMember{cand: i, bookings: in.bookings(i), hash: in.hash(i)})
		}
	}
	if len(ms) == 0 {
		return nil
	}
	lim := rankLimits{days: days, maxPer: maxPer, maxTotal: maxTotal}
	picks, complete := firstPass(in, ms, lim)
	if complete {
		picks = laterPasses(in, ms, lim, picks)
	}
	ms.sortByStart(picks)
	return picks
}

// rankLimits are the bounds of one ranking: the days of the window, the
// options per candidate and in all.
type rankLimits struct{ days, maxPer, maxTotal int }

// rankMember is a candidate in the sample: its number, how many bookings
// it has in the window, its rotation hash, and how many options it has
// been given so far.
type rankMember struct {
	cand     int
	bookings int
	hash     uint64
	count    int
}

// rankMembers is the sample, in walk order.
type rankMembers []rankMember

// better reports whether member a ranks before member b (step 2).
func (ms rankMembers) better(a, b int) bool {
	x, y := &ms[a], &ms[b]
	return cmp.Or(cmp.Compare(x.bookings, y.bookings), cmp.Compare(x.hash, y.hash), cmp.Compare(x.cand, y.cand)) < 0
}

// firstPass walks the buckets in time order and takes one option per
// bucket (step 3). It reports whether it walked them all with places left.
func firstPass(in rankInput, ms rankMembers, lim rankLimits) ([]rankPick, bool) {
	var picks []rankPick
	for d := range lim.days {
		for part := range partsPerDay {
			m, s := firstPick(in, ms, lim, d, part)
			if m < 0 {
				continue
			}
			picks = append(picks, rankPick{ms[m].cand, s})
			ms[m].count++
			if len(picks) >= lim.maxTotal {
				return picks, false
			}
		}
	}
	return picks, true
}

// firstPick returns the first pass's choice in the bucket of day d and part
// of the day part, or -1 when no member has a slot there. The fewest
// options so far decide first: members with more are only looked at (their
// slots computed) when no member with fewer has a slot in the bucket; then
// the earliest start, then the better-ranked member.
func firstPick(in rankInput, ms rankMembers, lim rankLimits, d, part int) (int, rankSlot) {
	best, bestSlot := -1, rankSlot{}
	for level := 0; level < lim.maxPer && best < 0; level++ {
		for m := range ms {
			if ms[m].count != level {
				continue
			}
			for _, s := range in.slots(ms[m].cand, d) {
				if s.part != part {
					continue
				}
				if best < 0 || s.start < bestSlot.start || s.start == bestSlot.start && ms.better(m, best) {
					best, bestSlot = m, s
				}
				break // the earliest slot of the part is the member's best there
			}
		}
	}
	return best, bestSlot
}

// rankEntry is a slot of a member in a bucket of the later passes, and
// whether it has been picked.
type rankEntry struct {
	m     int
	slot  rankSlot
	taken bool
}

// laterPasses fills the places a complete first pass left from the members
// below their cap: each pass walks the buckets again and takes one more
// option per bucket, until the places or the slots run out (step 4). It
// returns picks with the options it added.
func laterPasses(in rankInput, ms rankMembers, lim rankLimits, picks []rankPick) []rankPick {
	open := false
	for m := range ms {
		open = open || ms[m].count < lim.maxPer
	}
	if !open || len(picks) >= lim.maxTotal {
		return picks
	}
	// The non-empty buckets, in time order, of the slots of the members
	// below their cap.
	var buckets [][]rankEntry
	for d := range lim.days {
		var day [partsPerDay][]rankEntry
		for m := range ms {
			if ms[m].count >= lim.maxPer {
				continue
			}
			for _, s := range in.slots(ms[m].cand, d) {
				day[s.part] = append(day[s.part], rankEntry{m: m, slot: s})
			}
		}
		for _, b := range day {
			if len(b) > 0 {
				buckets = append(buckets, b)
			}
		}
	}
	offered := map[int64]bool{} // the start instants offered so far
	ms.markPicked(buckets, picks, offered)
	for len(picks) < lim.maxTotal {
		chose := false
		for _, b := range buckets {
			k := ms.laterPick(b, lim, offered)
			if k < 0 {
				continue
			}
			e := &b[k]
			e.taken = true
			ms[e.m].count++
			offered[e.slot.start] = true
			picks = append(picks, rankPick{ms[e.m].cand, e.slot})
			chose = true
			if len(picks) >= lim.maxTotal {
				break
			}
		}
		if !chose {
			break
		}
	}
	return picks
}

// markPicked marks the entries of picks as taken and their start instants
// as offered.
func (ms rankMembers) markPicked(buckets [][]rankEntry, picks []rankPick, offered map[int64]bool) {
	for _, p := range picks {
		offered[p.slot.start] = true
		for _, b := range buckets {
			for k := range b {
				if ms[b[k].m].cand == p.cand && b[k].slot.start == p.slot.start {
					b[k].taken = true
				}
			}
		}
	}
}

// laterPick returns the index of a later pass's choice in bucket b, or -1
// when every entry is taken or its member capped: a start instant not yet
// offered, then a member with fewer options, then the earliest start, then
// the better-ranked member.
func (ms rankMembers) laterPick(b []rankEntry, lim rankLimits, offered map[int64]bool) int {
	best := -1
	for k := range b {
		e := &b[k]
		if e.taken || ms[e.m].count >= lim.maxPer {
			continue
		}
		if best < 0 || ms.laterBefore(e, &b[best], offered) {
			best = k
		}
	}
	return best
}

// laterBefore reports whether entry e is preferred to entry o (laterPick's
// order).
func (ms rankMembers) laterBefore(e, o *rankEntry, offered map[int64]bool) bool {
	if eNew, oNew := !offered[e.slot.start], !offered[o.slot.start]; eNew != oNew {
		return eNew
	}
	if ce, co := ms[e.m].count, ms[o.m].count; ce != co {
		return ce < co
	}
	if e.slot.start != o.slot.start {
		return e.slot.start < o.slot.start
	}
	return ms.better(e.m, o.m)
}

// sortByStart sorts picks by start, then by their members' rank (step 5).
func (ms rankMembers) sortByStart(picks []rankPick) {
	rankOf := make(map[int]int, len(ms))
	for m := range ms {
		rankOf[ms[m].cand] = m
	}
	slices.SortFunc(picks, func(a, b rankPick) int {
		if c := cmp.Compare(a.slot.start, b.slot.start); c != 0 {
			return c
		}
		switch ma, mb := rankOf[a.cand], rankOf[b.cand]; {
		case ma == mb:
			return 0
		case ms.better(ma, mb):
			return -1
		}
		return 1
	})
}

// rotationPeriod is the Stockholm quarter-hour of a search, the period of
// the rotation: searches in the same quarter-hour walk the candidates in
// the same order, the next quarter-hour in another.
func rotationPeriod(now time.Time) string {
	t := now.In(schedule.Stockholm())
	return t.Format("2006-01-02T15:") + fmt.Sprintf("%02d", t.Minute()/15*15)
}

// rotationHash orders the candidates of one search: a stable hash of the
// provider, the rotation period of the search (rotationPeriod) and the
// postcode (FNV-1a, then a 64-bit finaliser so that similar ids spread).
// It changes every quarter-hour and per postcode, so over many searches
// every provider comes first.
func rotationHash(providerID, period, postcode string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * prime
		}
		h = (h ^ 0xff) * prime
	}
	add(providerID)
	add(period)
	add(postcode)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9f3fe1a85ec
	h ^= h >> 33
	return h
}
