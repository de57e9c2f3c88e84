package booking

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
)

// The availability index: what search needs to find free slots, kept in
// memory and checked against the store on every search.
//
// It holds the supply snapshot and, per provider, the busy intervals (the
// active calendar entries ending after the index's cutoff, a day before it
// was first built). Every search reads the supply and the calendar revision
// in one small statement; when both equal the index's, the index is
// current and the search reads nothing else. When either moved on, one
// refresh (one at a time) reads, in one read-only snapshot, the supply (if
// its revision moved) and the entries of only the providers whose calendar
// changed since the index's calendar revision, and publishes a new index.
// An index is never modified once published: a refresh copies the map and
// replaces the changed providers' slices, so a search holds one consistent
// index (one supply revision, one calendar revision) from start to end and
// never waits for a refresh longer than a pointer swap, unless it needs the
// refresh itself.
//
// A search thus never offers a slot booked or blocked by a transaction
// that committed before the search began, in this process or another: the
// revision it reads covers that commit (triggers move the calendar
// revision in the writing transaction, in commit order).
type availIndex struct {
	snap   *snapshot
	calRev int64
	// cutoff: entries ending at or before it are not held. Searches at an
	// instant before it rebuild the index.
	cutoff time.Time
	busy   map[string]*providerBusy
}

// providerBusy is one provider's busy intervals, sorted by start.
type providerBusy struct {
	intervals []schedule.Interval
	booking   []bool // whether intervals[i] is a booking (else blocked)
	// maxLen is the longest interval: an interval overlapping a day starts
	// at most maxLen before it.
	maxLen time.Duration
}

// indexRetention is how far before the instant of a full build the index
// keeps entries, and indexRebuild how long an index keeps past entries
// before a full build drops them.
const (
	indexRetention = 24 * time.Hour
	indexRebuild   = 7 * 24 * time.Hour
)

// currentIndex returns an index at the store's current revisions, at one
// small read when nothing changed.
func (s *Search) currentIndex(ctx context.Context, now time.Time) (*availIndex, error) {
	ix := s.idx.Load()
	if ix == nil || now.Before(ix.cutoff) || now.Sub(ix.cutoff) > indexRebuild {
		return s.refreshIndex(ctx, -1, -1, now)
	}
	supplyRev, calRev, err := s.store.Revisions(ctx)
	if err != nil {
		return nil, err
	}
	if supplyRev == ix.snap.revision && calRev == ix.calRev {
		return ix, nil
	}
	return s.refreshIndex(ctx, supplyRev, calRev, now)
}

// refreshIndex brings the index to at least the revisions given (a full
// build when they are negative), unless a concurrent refresh already did.
func (s *Search) refreshIndex(ctx context.Context, supplyRev, calRev int64, now time.Time) (*availIndex, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	old := s.idx.Load()
	full := old == nil || supplyRev < 0 || calRev < 0 || now.Before(old.cutoff) || now.Sub(old.cutoff) > indexRebuild
	if !full && old.snap.revision >= supplyRev && old.calRev >= calRev {
		return old, nil
	}
	haveSupply, haveCal, cutoff := int64(-1), int64(-1), now.Add(-indexRetention)
	if !full {
		haveSupply, haveCal, cutoff = old.snap.revision, old.calRev, old.cutoff
	}
	a, err := s.store.ReadAvailability(ctx, haveSupply, haveCal, full, cutoff)
	if err != nil {
		return nil, fmt.Errorf("read availability: %w", err)
	}
	ix := &availIndex{calRev: a.CalendarRevision, cutoff: cutoff}
	if a.Supply != nil {
		ix.snap = newSnapshot(*a.Supply)
	} else {
		ix.snap = old.snap
	}
	if a.Full {
		ix.busy = make(map[string]*providerBusy)
	} else {
		ix.busy = maps.Clone(old.busy)
		for _, id := range a.Changed {
			delete(ix.busy, id)
		}
	}
	for i := 0; i < len(a.Entries); {
		j := i
		for j < len(a.Entries) && a.Entries[j].ProviderID == a.Entries[i].ProviderID {
			j++
		}
		ix.busy[a.Entries[i].ProviderID] = newProviderBusy(a.Entries[i:j])
		i = j
	}
	s.idx.Store(ix)
	return ix, nil
}

func newProviderBusy(entries []sqlstore.BusyEntry) *providerBusy {
	b := &providerBusy{intervals: make([]schedule.Interval, len(entries)), booking: make([]bool, len(entries))}
	for i, e := range entries {
		b.intervals[i] = schedule.Interval{Start: e.Start, End: e.End}
		b.booking[i] = e.Booking
		b.maxLen = max(b.maxLen, e.End.Sub(e.Start))
	}
	// Entries come ordered by start already; keep the order whatever the
	// reader did.
	if !slices.IsSortedFunc(b.intervals, func(x, y schedule.Interval) int { return x.Start.Compare(y.Start) }) {
		idx := make([]int, len(entries))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(x, y int) int { return entries[x].Start.Compare(entries[y].Start) })
		for k, i := range idx {
			b.intervals[k] = schedule.Interval{Start: entries[i].Start, End: entries[i].End}
			b.booking[k] = entries[i].Booking
		}
	}
	return b
}

// within returns the intervals that may overlap [from, to).
func (b *providerBusy) within(from, to time.Time) []schedule.Interval {
	if b == nil {
		return nil
	}
	lo := sort.Search(len(b.intervals), func(i int) bool { return !b.intervals[i].Start.Before(from.Add(-b.maxLen)) })
	hi := sort.Search(len(b.intervals), func(i int) bool { return !b.intervals[i].Start.Before(to) })
	if lo >= hi {
		return nil
	}
	return b.intervals[lo:hi]
}

// bookingsIn counts the bookings overlapping w.
func (b *providerBusy) bookingsIn(w schedule.Interval) int {
	if b == nil {
		return 0
	}
	n := 0
	for i, iv := range b.intervals {
		if b.booking[i] && iv.Overlaps(w) {
			n++
		}
	}
	return n
}

// plan is how one candidate is searched: its offer, the job's duration
// with it, and the bounds of its slots.
type plan struct {
	p        *providerEntry
	offer    bokat.ProviderService
	duration time.Duration
	// from and to bound the slots in the window (empty when the window is
	// past the provider's horizon); horizon is the end of its horizon.
	from, to time.Time
	horizon  time.Time
	earliest time.Time
}

// searchWalk is one search's view of its candidates on one index: it
// implements rankInput, computing each candidate's slots a day at a time
// only when the ranking asks for them.
type searchWalk struct {
	s      *Search
	ix     *availIndex
	cands  *candidateList
	job    jobSpec
	window schedule.Window
	days   []schedule.Date
	// state of the candidates looked at, by walk position.
	state map[int]*walkState
}

// jobSpec is what a search looks for: the service and the job's quantity.
type jobSpec struct {
	svc      catalog.Service
	quantity float64
	now      time.Time
}

type walkState struct {
	plan  plan
	busy  *providerBusy
	byDay [][]schedule.Interval // by day of the window; computed when done[day]
	done  []bool
}

func (w *searchWalk) candidates() int   { return len(w.cands.providers) }
func (w *searchWalk) hash(i int) uint64 { return w.cands.hashes[i] }
func (w *searchWalk) bookings(i int) int {
	st := w.at(i)
	return st.busy.bookingsIn(w.windowInterval())
}
func (w *searchWalk) windowInterval() schedule.Interval {
	return schedule.Interval{Start: w.window.Start, End: w.window.End}
}

func (w *searchWalk) at(i int) *walkState {
	if st, ok := w.state[i]; ok {
		return st
	}
	p := w.cands.providers[i]
	st := &walkState{plan: w.s.planFor(p, w.job, w.window), busy: w.ix.busy[p.supply.ID]}
	w.state[i] = st
	return st
}

func (w *searchWalk) slots(i, day int) []schedule.Interval {
	st := w.at(i)
	if st.done == nil {
		st.byDay, st.done = make([][]schedule.Interval, len(w.days)), make([]bool, len(w.days))
	}
	if !st.done[day] {
		st.byDay[day], st.done[day] = w.s.daySlots(st, w.days[day], w.window.Daily), true
	}
	return st.byDay[day]
}

// daySlots returns the free slots of a candidate on day d of the window.
func (s *Search) daySlots(st *walkState, d schedule.Date, daily schedule.ClockRange) []schedule.Interval {
	pl := &st.plan
	from, to := d.At(0), d.AddDays(1).At(0)
	if pl.from.After(from) {
		from = pl.from
	}
	if pl.to.Before(to) {
		to = pl.to
	}
	if !from.Before(to) {
		return nil
	}
	return schedule.Slots(schedule.SlotParams{
		Hours: pl.p.hours, From: from, To: to, Duration: pl.duration, Step: s.step,
		Busy: st.busy.within(from, to), Earliest: pl.earliest, Daily: daily,
	})
}

// windowDays lists the Stockholm dates a search looks at: from the later of
// the window's start and now, to the window's end.
func windowDays(w schedule.Window, now time.Time) []schedule.Date {
	lo := w.Start
	if now.After(lo) {
		lo = now
	}
	if !lo.Before(w.End) {
		return nil
	}
	var out []schedule.Date
	last := schedule.DateOf(w.End.Add(-time.Nanosecond))
	for d := schedule.DateOf(lo); !d.After(last); d = d.AddDays(1) {
		out = append(out, d)
	}
	return out
}

// maxNextAvailable is how many free times after an empty window a search
// reports.
const maxNextAvailable = 3

// nextAvailable returns the earliest free slots after the window's end, at
// most maxNextAvailable, with distinct starts (of equal starts the one
// ending first), over every candidate (within its horizon, whatever the
// window's daily range).
func (w *searchWalk) nextAvailable() []schedule.Interval {
	var best []schedule.Interval
	for i := range w.cands.providers {
		st := w.at(i)
		pl := &st.plan
		from, to := w.window.End, pl.horizon
		if len(best) == maxNextAvailable {
			// Only a start before the last of the best can enter.
			if last := best[len(best)-1].Start.Add(pl.duration); last.Before(to) {
				to = last
			}
		}
		if !from.Before(to) {
			continue
		}
		for _, iv := range schedule.Slots(schedule.SlotParams{
			Hours: pl.p.hours, From: from, To: to, Duration: pl.duration, Step: w.s.step,
			Busy: st.busy.within(from, to), Earliest: pl.earliest, Limit: maxNextAvailable,
		}) {
			best = mergeEarliest(best, iv)
		}
	}
	return best
}

// mergeEarliest adds iv to best (sorted by start, distinct starts, at most
// maxNextAvailable), keeping the earliest.
func mergeEarliest(best []schedule.Interval, iv schedule.Interval) []schedule.Interval {
	k, found := slices.BinarySearchFunc(best, iv, func(a, b schedule.Interval) int { return a.Start.Compare(b.Start) })
	if found {
		if iv.End.Before(best[k].End) {
			best[k] = iv
		}
		return best
	}
	if k >= maxNextAvailable {
		return best
	}
	best = slices.Insert(best, k, iv)
	if len(best) > maxNextAvailable {
		best = best[:maxNextAvailable]
	}
	return best
}
