package booking

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sort"
	"sync"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
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

// providerBusy is one provider's busy intervals, sorted by start, as Unix
// milliseconds: pointer-free, so the garbage collector does not scan the
// millions of intervals a national supply holds. The slices are the ones
// the store read (runs of one array per read), never modified.
type providerBusy struct {
	spans   []BusySpan
	booking []bool // whether spans[i] is a booking (else blocked)
	// maxLen is the longest span: a span overlapping an instant starts at
	// most maxLen before it.
	maxLen int64
}

// indexRetention is how far before the instant of a full build the index
// keeps entries, and indexRebuild how long an index keeps past entries
// before a full build drops them.
const (
	indexRetention = 24 * time.Hour
	indexRebuild   = 7 * 24 * time.Hour
)

// Warm builds the availability index now, so that the first search after
// start does not pay for reading every provider's calendar.
func (s *Search) Warm(ctx context.Context) error {
	_, err := s.currentIndex(ctx, s.now())
	return err
}

// Warmed reports whether the availability index has been built: until
// then, a search waits for the build.
func (s *Search) Warmed() bool { return s.idx.Load() != nil }

// currentIndex returns an index at the store's current revisions, at one
// small read when nothing changed.
func (s *Search) currentIndex(ctx context.Context, now time.Time) (*availIndex, error) {
	ix := s.idx.Load()
	if ix == nil || ix.stale(now) {
		built, fresh, err := s.buildIndex(ctx, now)
		if err != nil || fresh {
			// A build by this search read the store after the search began:
			// it needs no revision check.
			return built, err
		}
		// A concurrent search (or the warm-up) built it while this one
		// waited, from a read that may predate this search: check it like
		// any cached index, rather than building a second one.
		ix = built
	}
	supplyRev, calRev, err := s.store.Revisions(ctx)
	if err != nil {
		return nil, err
	}
	if supplyRev == ix.snap.revision && calRev == ix.calRev {
		return ix, nil
	}
	if supplyRev != ix.snap.revision && ix.snap.providers > s.waitReload {
		// A large supply changed (an import): reading it takes seconds,
		// which no search waits for. It is read beside, and until it
		// replaces this index searches answer from this one, calendar
		// included; a confirm checks every fact again in its transaction.
		s.reloadBeside(supplyRev, calRev, now)
		return ix, nil
	}
	return s.refreshIndex(ctx, supplyRev, calRev, now)
}

// reloadBeside brings the index to the revisions given in a goroutine of
// its own, unless one is doing so already. A failed reload is tried again
// by the next search that finds the supply moved.
func (s *Search) reloadBeside(supplyRev, calRev int64, now time.Time) {
	if !s.reloading.CompareAndSwap(false, true) {
		return
	}
	s.reloads.Add(1)
	go func() {
		defer s.reloads.Done()
		defer s.reloading.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), reloadTimeout)
		defer cancel()
		held := s.idx.Load()
		s.log.Info("search index reloading beside the index in use", "supply_revision", supplyRev,
			"held_supply_revision", held.snap.revision, "calendar_revision", calRev, "held_calendar_revision", held.calRev)
		start := time.Now()
		restore := tightenGC()
		s.loadMu.Lock()
		ix, r, err := s.refreshLocked(ctx, supplyRev, calRev, now)
		s.loadMu.Unlock()
		restore()
		took := time.Since(start)
		if err != nil {
			s.log.Error("search index reload failed; searches keep the index in use, the next one to find the supply moved tries again",
				"error", err.Error(), "duration_ms", took.Milliseconds())
		} else {
			s.log.Info("search index reloaded", "supply_revision", ix.snap.revision, "calendar_revision", ix.calRev,
				"providers", ix.snap.providers, "providers_kept", r.kept, "calendar_providers_read", r.calendars,
				"calendar_entries_read", r.entries, "duration_ms", took.Milliseconds())
		}
		if s.reloaded != nil {
			s.reloaded(took, err)
		}
	}()
}

// reloadGCPercent is the collector's heap growth (GOGC) while a reload
// beside the index in use runs.
const reloadGCPercent = 50

// tightenGC lowers the collector's heap growth to reloadGCPercent, unless
// the process runs with less (or without a collector target), and returns
// what restores it. The heap may grow past what was live at the last
// collection by GOGC percent: while a reload holds two indexes, the default
// 100 lets it reach twice both. Reloads run one at a time and nothing else
// in the process sets the growth.
func tightenGC() (restore func()) {
	prev := debug.SetGCPercent(reloadGCPercent)
	if prev <= reloadGCPercent { // lower already, or off (-1)
		debug.SetGCPercent(prev)
		return func() {}
	}
	return func() { debug.SetGCPercent(prev) }
}

// reloadTimeout bounds a reload beside the index in use.
const reloadTimeout = 10 * time.Minute

// buildIndex builds the index in full, unless a concurrent call built a
// usable one while this one waited; fresh says whether this call built it.
func (s *Search) buildIndex(ctx context.Context, now time.Time) (ix *availIndex, fresh bool, err error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if old := s.idx.Load(); old != nil && !old.stale(now) {
		return old, false, nil
	}
	ix, _, err = s.refreshLocked(ctx, -1, -1, now)
	return ix, true, err
}

// refreshIndex brings the index to at least the revisions given (a full
// build when they are negative), unless a concurrent refresh already did.
func (s *Search) refreshIndex(ctx context.Context, supplyRev, calRev int64, now time.Time) (*availIndex, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	ix, _, err := s.refreshLocked(ctx, supplyRev, calRev, now)
	return ix, err
}

// refreshReport is what a refresh read: the providers whose entries it
// kept from the index it replaced, the providers whose calendar it read,
// and their calendar entries.
type refreshReport struct {
	kept, calendars, entries int
}

// refreshLocked is refreshIndex with loadMu held.
func (s *Search) refreshLocked(ctx context.Context, supplyRev, calRev int64, now time.Time) (*availIndex, refreshReport, error) {
	old := s.idx.Load()
	full := old == nil || supplyRev < 0 || calRev < 0 || old.stale(now)
	if !full && old.snap.revision >= supplyRev && old.calRev >= calRev {
		return old, refreshReport{}, nil
	}
	haveSupply, haveCal, cutoff := int64(-1), int64(-1), now.Add(-indexRetention)
	if !full {
		haveSupply, haveCal, cutoff = old.snap.revision, old.calRev, old.cutoff
	}
	// The supply is indexed run by run as the store reads it, keeping the
	// held index's entries of the providers that did not change.
	var prev *snapshot
	if old != nil {
		prev = old.snap
	}
	b := newSnapshotBuilder(prev)
	a, err := s.store.ReadAvailability(ctx, haveSupply, haveCal, full, cutoff, func(run []bokat.ProviderSupply) error {
		b.add(run)
		return nil
	})
	if err != nil {
		return nil, refreshReport{}, fmt.Errorf("read availability: %w", err)
	}
	ix := &availIndex{calRev: a.CalendarRevision, cutoff: cutoff}
	if a.SupplyRead {
		ix.snap = b.done(a.SupplyRevision)
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
	for _, c := range a.Calendars {
		ix.busy[c.ProviderID] = newProviderBusy(c)
	}
	s.idx.Store(ix)
	return ix, refreshReport{kept: b.kept, calendars: len(a.Calendars), entries: a.EntryCount()}, nil
}

// stale reports whether the index must be built again at now: the clock
// went back before its cutoff, or its past entries are too old to keep.
func (ix *availIndex) stale(now time.Time) bool {
	return now.Before(ix.cutoff) || now.Sub(ix.cutoff) > indexRebuild
}

// newProviderBusy keeps c's intervals as they are when they come ordered by
// start (as the store reads them), else a sorted copy.
func newProviderBusy(c ProviderCalendar) *providerBusy {
	b := &providerBusy{spans: c.Spans, booking: c.Booking}
	if !slices.IsSortedFunc(c.Spans, func(x, y BusySpan) int { return cmp.Compare(x.Start, y.Start) }) {
		idx := make([]int, len(c.Spans))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(c.Spans[x].Start, c.Spans[y].Start) })
		b.spans, b.booking = make([]BusySpan, len(idx)), make([]bool, len(idx))
		for k, i := range idx {
			b.spans[k], b.booking[k] = c.Spans[i], c.Booking[i]
		}
	}
	for _, sp := range b.spans {
		b.maxLen = max(b.maxLen, sp.End-sp.Start)
	}
	return b
}

// within returns the spans that may overlap [from, to) (milliseconds).
func (b *providerBusy) within(from, to int64) []BusySpan {
	if b == nil {
		return nil
	}
	lo := sort.Search(len(b.spans), func(i int) bool { return b.spans[i].Start >= from-b.maxLen })
	hi := sort.Search(len(b.spans), func(i int) bool { return b.spans[i].Start >= to })
	if lo >= hi {
		return nil
	}
	return b.spans[lo:hi]
}

// bookingsIn counts the bookings overlapping w.
func (b *providerBusy) bookingsIn(w schedule.Interval) int {
	if b == nil {
		return 0
	}
	from, to := w.Start.UnixMilli(), w.End.UnixMilli()
	n := 0
	for i, sp := range b.spans {
		if b.booking[i] && sp.Start < to && from < sp.End {
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
	s     *Search
	ix    *availIndex
	cands *candidateList
	job   jobSpec
	// svcNum is the job's service's number in the index's snapshot.
	svcNum int
	window schedule.Window
	days   []schedule.Date
	// state of the candidates looked at, by walk position (nil for one
	// not looked at; touched lists those that are not); the states live
	// in slab, and their slots in arena (a search looks at a few dozen
	// candidate days: a few allocations instead of one per day). A slice,
	// not a map: the ranking asks for a member's slots hundreds of times.
	state   []*walkState
	touched []int
	slab    []walkState
	arena   [][]rankSlot
	// probe is free's scratch buffer.
	probe []rankSlot
	// horizons memoises the ends of horizons by their length in days: most
	// candidates share a few.
	horizons map[int]time.Time
	// spans holds the candidates' byDay, as slab their states.
	spans []daySpan
}

// walkPool keeps the scratch memory of finished walks (state map, slab,
// arena, day spans) for the next search: a search over a national supply
// otherwise allocates a fifth of its bytes for it, which the collector
// then pays for against a heap of tens of thousands of providers.
var walkPool = sync.Pool{New: func() any { return new(searchWalk) }}

// newSearchWalk returns an empty walk, its scratch memory reused.
func newSearchWalk() *searchWalk { return walkPool.Get().(*searchWalk) }

// begin readies the walk for the candidates of cands.
func (w *searchWalk) begin(cands *candidateList) {
	w.cands = cands
	if n := len(cands.providers); cap(w.state) < n {
		w.state = make([]*walkState, n)
	} else {
		w.state = w.state[:n]
	}
}

// release returns the walk's scratch memory to the pool: nothing the
// search returns points into it (picks and options hold copies). It keeps
// the last chunk of the slab, the arena and the day spans, cleared, and
// nothing of the index, so a pooled walk never holds an index that was
// replaced.
func (w *searchWalk) release() {
	for _, i := range w.touched {
		w.state[i] = nil
	}
	clear(w.horizons)
	clear(w.slab)
	slab, spans, days, probe := w.slab[:0], w.spans[:0], w.days[:0], w.probe[:0]
	var arena [][]rankSlot
	if n := len(w.arena); n > 0 {
		arena = append(w.arena[:0], w.arena[n-1][:0])
		clear(w.arena[1:n])
	}
	*w = searchWalk{state: w.state[:0], touched: w.touched[:0], horizons: w.horizons, slab: slab, spans: spans, days: days,
		probe: probe, arena: arena}
	walkPool.Put(w)
}

// daySpans returns n cleared day spans from the walk's spans, in a new
// chunk (twice the last) when the last has no room: earlier chunks stay
// where they are.
func (w *searchWalk) daySpans(n int) []daySpan {
	if cap(w.spans)-len(w.spans) < n {
		w.spans = make([]daySpan, 0, max(min(2*cap(w.spans), 1024), 16*n))
	}
	lo := len(w.spans)
	w.spans = w.spans[:lo+n]
	out := w.spans[lo : lo+n : lo+n]
	clear(out)
	return out
}

// plan returns how candidate p is searched for the job in the window.
func (w *searchWalk) plan(p *providerEntry) plan {
	job := w.job
	offer, _ := p.service(job.svc.ID, w.svcNum)
	pl := plan{p: p, offer: offer, duration: JobDuration(*job.svc, offer, job.quantity),
		earliest: maxTime(job.now.Add(time.Duration(p.provider.MinNoticeMinutes)*time.Minute), p.pausedUntil),
		horizon:  w.horizon(p.provider.HorizonDays)}
	pl.from, pl.to = w.window.Start, minTime(w.window.End, pl.horizon)
	return pl
}

// horizon returns the end of a horizon of days days from the search's now:
// the same Stockholm wall-clock time days later.
func (w *searchWalk) horizon(days int) time.Time {
	h, ok := w.horizons[days]
	if !ok {
		if w.horizons == nil {
			w.horizons = map[int]time.Time{}
		}
		h = w.job.now.In(schedule.Stockholm()).AddDate(0, 0, days)
		w.horizons[days] = h
	}
	return h
}

// jobSpec is what a search looks for: the service and the job's quantity.
type jobSpec struct {
	svc      *catalog.Service
	quantity float64
	now      time.Time
}

type walkState struct {
	plan  plan
	busy  *providerBusy
	byDay []daySpan // by day of the window
}

// daySpan locates a candidate's free slots on one day in the walk's arena,
// once computed: arena[chunk][from : from+n].
type daySpan struct {
	chunk, from, n int32
	done           bool
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
	if st := w.state[i]; st != nil {
		return st
	}
	p := w.cands.providers[i]
	return w.keep(i, walkState{plan: w.plan(p), busy: w.ix.busy[p.provider.ID]})
}

// keep makes st candidate i's state.
func (w *searchWalk) keep(i int, st walkState) *walkState {
	if len(w.slab) == cap(w.slab) {
		// A new chunk, twice the last; earlier chunks stay where they are.
		w.slab = make([]walkState, 0, min(max(2*cap(w.slab), 4), 64))
	}
	w.slab = append(w.slab, st)
	kept := &w.slab[len(w.slab)-1]
	w.state[i] = kept
	w.touched = append(w.touched, i)
	return kept
}

// free answers without keeping anything for a candidate it has not looked
// at before and finds without a free slot: a search over a window that few
// candidates have free walks past many of them. One with a free slot joins
// the ranking's sample, which looks at it next: its state is kept, so its
// plan and calendar are not looked up again.
func (w *searchWalk) free(i, days int) bool {
	if w.state[i] != nil {
		for d := range days {
			if len(w.slots(i, d)) > 0 {
				return true
			}
		}
		return false
	}
	p := w.cands.providers[i]
	if !w.window.Start.Before(w.horizon(p.provider.HorizonDays)) {
		return false // the window starts after its horizon
	}
	st := walkState{plan: w.plan(p), busy: w.ix.busy[p.provider.ID]}
	if !st.plan.from.Before(st.plan.to) {
		return false
	}
	for d := range days {
		w.probe = appendDaySlots(w.probe[:0], &st, w.s.dayTemplate(p, st.plan.duration, w.window.Daily, w.window.Starts, w.days[d]))
		if len(w.probe) > 0 {
			w.keep(i, st)
			return true
		}
	}
	return false
}

func (w *searchWalk) slots(i, day int) []rankSlot {
	st := w.at(i)
	if st.byDay == nil {
		st.byDay = w.daySpans(len(w.days))
	}
	ds := &st.byDay[day]
	if !ds.done {
		// The arena is a list of chunks, each twice the last: a new one
		// when the day's template may not fit in the last, so no slot is
		// ever copied.
		t := w.s.dayTemplate(st.plan.p, st.plan.duration, w.window.Daily, w.window.Starts, w.days[day])
		last := len(w.arena) - 1
		if last < 0 || cap(w.arena[last])-len(w.arena[last]) < len(t.slots) {
			size := 32
			if last >= 0 {
				size = min(2*cap(w.arena[last]), 512)
			}
			w.arena = append(w.arena, make([]rankSlot, 0, max(size, len(t.slots))))
			last++
		}
		from := len(w.arena[last])
		w.arena[last] = appendDaySlots(w.arena[last], st, t)
		*ds = daySpan{chunk: int32(last), from: int32(from), n: int32(len(w.arena[last]) - from), done: true}
	}
	return w.arena[ds.chunk][ds.from : ds.from+ds.n : ds.from+ds.n]
}

// appendDaySlots appends to dst the free slots of a candidate on the day of
// template t (its hours and job length on that day): the template less what
// starts before its window, notice or ends after its horizon, and what
// overlaps its busy intervals. This is what schedule.Slots answers for that
// day (the property test compares them), without computing wall-clock times
// per provider.
func appendDaySlots(dst []rankSlot, st *walkState, t *dayTemplate) []rankSlot {
	pl := &st.plan
	if len(t.slots) == 0 {
		return dst
	}
	lo, to := t.slots[0].start, t.slots[len(t.slots)-1].end
	lo = max(lo, pl.from.UnixMilli(), pl.earliest.UnixMilli())
	to = min(to, pl.to.UnixMilli())
	if lo >= to {
		return dst
	}
	busy := st.busy.within(lo, to)
	out := dst
	for _, sp := range t.slots {
		if sp.start < lo {
			continue
		}
		if sp.end > to {
			break // one job length: ends grow with starts
		}
		free := true
		for _, b := range busy {
			if b.Start >= sp.end {
				break
			}
			if sp.start < b.End {
				free = false
				break
			}
		}
		if free {
			out = append(out, sp)
		}
	}
	return out
}

// templateKey names a day template: the slots of a day for working hours,
// job length and daily range, before notice, horizon and busy intervals.
type templateKey struct {
	hours    string
	duration time.Duration
	daily    schedule.ClockRange
	starts   schedule.ClockRange
	day      schedule.Date
}

// maxTemplates bounds the template memo; when it is full it starts again.
const maxTemplates = 16384

// dayTemplate holds the slots of a day for one pattern of hours.
type dayTemplate struct {
	slots []rankSlot
}

// dayTemplate returns the day template of p's hours, memoised: providers
// with the same hours share it, so a search computes wall-clock slot times
// once per pattern and day instead of once per provider and day.
func (s *Search) dayTemplate(p *providerEntry, duration time.Duration, daily, starts schedule.ClockRange, d schedule.Date) *dayTemplate {
	hours, key := p.hoursOn(d)
	k := templateKey{hours: key, duration: duration, daily: daily, starts: starts, day: d}
	s.tmplMu.Lock()
	t, ok := s.templates[k]
	s.tmplMu.Unlock()
	if ok {
		return t
	}
	t = &dayTemplate{}
	for _, iv := range schedule.Slots(schedule.SlotParams{Hours: *hours, From: d.At(0), To: d.AddDays(1).At(0),
		Duration: duration, Step: s.step, Daily: daily, Starts: starts}) {
		t.slots = append(t.slots, newRankSlot(iv))
	}
	s.tmplMu.Lock()
	if len(s.templates) >= maxTemplates {
		clear(s.templates)
	}
	s.templates[k] = t
	s.tmplMu.Unlock()
	return t
}

// windowDays lists the Stockholm dates a search looks at: from the later of
// the window's start and now, to the window's end, without the weekdays the
// customer left out.
func windowDays(w schedule.Window, now time.Time) []schedule.Date {
	return appendWindowDays(nil, w, now)
}

// appendWindowDays appends windowDays(w, now) to dst.
func appendWindowDays(dst []schedule.Date, w schedule.Window, now time.Time) []schedule.Date {
	lo := w.Start
	if now.After(lo) {
		lo = now
	}
	if !lo.Before(w.End) {
		return dst
	}
	out := dst
	last := schedule.DateOf(w.End.Add(-time.Nanosecond))
	for d := schedule.DateOf(lo); !d.After(last); d = d.AddDays(1) {
		if !w.Except.Has(d.Weekday()) {
			out = append(out, d)
		}
	}
	return out
}

// maxNextAvailable is how many free times after an empty window a search
// reports.
const maxNextAvailable = 3

// nextFrom is where the free times after an empty window start: its end,
// or, when the customer named a time of day (a clock time, "förmiddag"),
// its start, so that the first later slot on the same day is offered too
// ("i morgon kl 06" with providers starting at 08: tomorrow at 08).
func (w *searchWalk) nextFrom() time.Time {
	if w.window.Daily.IsZero() && w.window.Starts.IsZero() {
		return w.window.End
	}
	return w.window.Start
}

// beyondHorizons reports whether the window starts at or after the end of
// every candidate's booking horizon, and if so the last date of the
// longest horizon.
func (w *searchWalk) beyondHorizons() (schedule.Date, bool) {
	var latest time.Time
	for _, p := range w.cands.providers {
		h := w.horizon(p.provider.HorizonDays)
		if w.window.Start.Before(h) {
			return schedule.Date{}, false
		}
		latest = maxTime(latest, h)
	}
	return schedule.DateOf(latest), !latest.IsZero()
}

// nextAvailable returns the earliest free slots from nextFrom, at most
// maxNextAvailable, with distinct starts (of equal starts the one ending
// first), over every candidate (within its horizon, whatever the window's
// time of day, never on a weekday the customer left out).
func (w *searchWalk) nextAvailable() []schedule.Interval {
	var best []schedule.Interval
	start := w.nextFrom()
	// This walks every candidate, so it keeps nothing per candidate, passes
	// over one whose horizon ends before the start before its plan, and
	// takes a candidate's slots from the day templates, as the ranking does.
	for _, p := range w.cands.providers {
		if !start.Before(w.horizon(p.provider.HorizonDays)) {
			continue
		}
		st := walkState{plan: w.plan(p), busy: w.ix.busy[p.provider.ID]}
		pl := &st.plan
		from, to := start, pl.horizon
		if len(best) == maxNextAvailable {
			// Only a start before the last of the best can enter.
			if last := best[len(best)-1].Start.Add(pl.duration); last.Before(to) {
				to = last
			}
		}
		if !from.Before(to) {
			continue
		}
		// The candidate's first maxNextAvailable slots in [from, to), a day
		// at a time, whatever the window's daily range.
		pl.from, pl.to = from, to
		taken := 0
		for d, last := schedule.DateOf(maxTime(from, pl.earliest)), schedule.DateOf(to); taken < maxNextAvailable && !d.After(last); d = d.AddDays(1) {
			if w.window.Except.Has(d.Weekday()) {
				continue
			}
			w.probe = appendDaySlots(w.probe[:0], &st, w.s.dayTemplate(p, pl.duration, schedule.ClockRange{}, schedule.ClockRange{}, d))
			for _, sl := range w.probe[:min(len(w.probe), maxNextAvailable-taken)] {
				best = mergeEarliest(best, sl.interval())
			}
			taken += len(w.probe)
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
