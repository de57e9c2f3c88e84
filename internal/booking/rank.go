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
//  1. Candidates are walked in today's rotation: ascending
//     rotationHash(provider, Stockholm date of the search, postcode). The
//     sample is the first `sample` candidates (MaxOptions) that have a free
//     slot in the window; the others are not looked at.
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
// have any, over `days` days; see the rule above.
func rankOptions(in rankInput, days, sample, maxPer, maxTotal int) []rankPick {
	type member struct {
		cand     int
		bookings int
		hash     uint64
		count    int
	}
	var ms []member
	for i := 0; i < in.candidates() && len(ms) < sample; i++ {
		if in.free(i, days) {
			ms = append(ms, member{cand: i, bookings: in.bookings(i), hash: in.hash(i)})
		}
	}
	if len(ms) == 0 {
		return nil
	}
	// better reports whether member a ranks before member b.
	better := func(a, b int) bool {
		x, y := &ms[a], &ms[b]
		return cmp.Or(cmp.Compare(x.bookings, y.bookings), cmp.Compare(x.hash, y.hash), cmp.Compare(x.cand, y.cand)) < 0
	}
	var picks []rankPick

	// First pass: one option per bucket, in time order.
	complete := true
first:
	for d := range days {
		for part := range partsPerDay {
			// The fewest options so far decide first: members with more
			// are only looked at (their slots computed) when no member
			// with fewer has a slot in the bucket.
			best, bestSlot := -1, rankSlot{}
			for level := 0; level < maxPer && best < 0; level++ {
				for m := range ms {
					if ms[m].count != level {
						continue
					}
					for _, s := range in.slots(ms[m].cand, d) {
						if s.part != part {
							continue
						}
						if best < 0 || s.start < bestSlot.start || s.start == bestSlot.start && better(m, best) {
							best, bestSlot = m, s
						}
						break // the earliest slot of the part is the member's best there
					}
				}
			}
			if best < 0 {
				continue
			}
			picks = append(picks, rankPick{ms[best].cand, bestSlot})
			ms[best].count++
			if len(picks) >= maxTotal {
				complete = false
				break first
			}
		}
	}

	// Later passes: every day has been seen; fill the remaining places
	// from the members below their cap.
	open := false
	for m := range ms {
		open = open || ms[m].count < maxPer
	}
	if complete && open && len(picks) < maxTotal {
		type entry struct {
			m     int
			slot  rankSlot
			taken bool
		}
		var buckets [][]entry
		for d := range days {
			var day [partsPerDay][]entry
			for m := range ms {
				if ms[m].count >= maxPer {
					continue
				}
				for _, s := range in.slots(ms[m].cand, d) {
					day[s.part] = append(day[s.part], entry{m: m, slot: s})
				}
			}
			for _, b := range day {
				if len(b) > 0 {
					buckets = append(buckets, b)
				}
			}
		}
		offered := map[int64]bool{}
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
		for len(picks) < maxTotal {
			chose := false
			for _, b := range buckets {
				best := -1
				for k := range b {
					e := &b[k]
					if e.taken || ms[e.m].count >= maxPer {
						continue
					}
					if best < 0 {
						best = k
						continue
					}
					o := &b[best]
					eNew, oNew := !offered[e.slot.start], !offered[o.slot.start]
					c := 0
					switch {
					case eNew != oNew:
						if eNew {
							c = -1
						} else {
							c = 1
						}
					case ms[e.m].count != ms[o.m].count:
						c = cmp.Compare(ms[e.m].count, ms[o.m].count)
					case e.slot.start != o.slot.start:
						c = cmp.Compare(e.slot.start, o.slot.start)
					case better(e.m, o.m):
						c = -1
					}
					if c < 0 {
						best = k
					}
				}
				if best < 0 {
					continue
				}
				e := &b[best]
				e.taken = true
				ms[e.m].count++
				offered[e.slot.start] = true
				picks = append(picks, rankPick{ms[e.m].cand, e.slot})
				chose = true
				if len(picks) >= maxTotal {
					break
				}
			}
			if !chose {
				break
			}
		}
	}

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
		case better(ma, mb):
			return -1
		}
		return 1
	})
	return picks
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
