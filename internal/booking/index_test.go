package booking_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// The property test: on random supplies and calendars, the indexed search
// answers exactly what a brute-force reference answers. The reference reads
// the supply and every candidate's calendar straight from the store,
// computes every free slot of the window with schedule.Slots, and applies
// the same ranking (rankOptions); for an empty window it computes every
// free slot after it. Random writes through the real store (bookings,
// cancellations, moves, blocked periods) between searches show that the
// index follows the calendar.

// refCand is one candidate of the reference.
type refCand struct {
	id       string
	hash     uint64
	bookings int
	byDay    [][]schedule.Interval
}

type refInput []refCand

func (r refInput) Candidates() int                      { return len(r) }
func (r refInput) Hash(i int) uint64                    { return r[i].hash }
func (r refInput) Bookings(i int) int                   { return r[i].bookings }
func (r refInput) Slots(i, day int) []schedule.Interval { return r[i].byDay[day] }

// refOption is what the comparison looks at of an option.
type refOption struct {
	Provider   string
	Start, End time.Time
}

func (o refOption) String() string {
	return fmt.Sprintf("%s %s–%s", o.Provider, o.Start.In(schedule.Stockholm()).Format("Mon 02 Jan 15:04"), o.End.In(schedule.Stockholm()).Format("15:04"))
}

// reference answers q at now by brute force: the options and, when there
// are none, the next available slots.
func reference(tb testing.TB, s *booking.Search, db *sqlstore.DB, q booking.Query, w schedule.Window, now time.Time) ([]refOption, []schedule.Interval, bool) {
	tb.Helper()
	ctx := context.Background()
	cat := testCatalog(tb)
	step, maxOptions, maxPerProvider := booking.Limits(s)
	jt, _ := cat.JobType(q.VerticalID, q.JobTypeID)
	svc, _ := cat.Service(jt.Seed.ServiceID)
	quantity, err := svc.Quantity(q.Details)
	if err != nil {
		tb.Fatalf("quantity: %v", err)
	}
	sup, err := db.LoadSupply(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	postcode, _ := bokat.ParsePostcode(q.Postcode)
	destination := -1
	if q.DestinationPostcode != "" {
		destination, _ = bokat.ParsePostcode(q.DestinationPostcode)
	}
	days := booking.WindowDays(w, now)
	dayIndex := map[schedule.Date]int{}
	for i, d := range days {
		dayIndex[d] = i
	}
	type full struct {
		refCand
		next []schedule.Interval
	}
	var cands []full
	var provByID = map[string]bokat.ProviderSupply{}
	for _, p := range sup.Providers {
		offer, ok := p.Service(svc.ID)
		if !p.Active || !ok || !p.Covers(postcode) || (destination >= 0 && !p.Covers(destination)) {
			continue
		}
		provByID[p.ID] = p
		duration := booking.JobDuration(svc, offer, quantity)
		horizon := now.In(schedule.Stockholm()).AddDate(0, 0, p.HorizonDays)
		earliest := now.Add(time.Duration(p.MinNoticeMinutes) * time.Minute)
		entries, err := db.BusyEntries(ctx, []string{p.ID}, now.Add(-48*time.Hour), horizon.Add(48*time.Hour))
		if err != nil {
			tb.Fatal(err)
		}
		var busy []schedule.Interval
		c := full{refCand: refCand{id: p.ID, hash: booking.RotationHash(p.ID, booking.RotationPeriod(now), bokat.PostcodeKey(postcode)),
			byDay: make([][]schedule.Interval, len(days))}}
		for _, e := range entries {
			busy = append(busy, schedule.Interval{Start: e.Start, End: e.End})
			if e.Kind == "booking" && e.Start.Before(w.End) && w.Start.Before(e.End) {
				c.bookings++
			}
		}
		hours := booking.WeeklyHours(p.Hours)
		for _, iv := range schedule.Slots(schedule.SlotParams{Hours: hours, From: w.Start, To: minTime(w.End, horizon),
			Duration: duration, Step: step, Busy: busy, Earliest: earliest, Daily: w.Daily, Starts: w.Starts, Except: w.Except}) {
			d, ok := dayIndex[schedule.DateOf(iv.Start)]
			if !ok {
				tb.Fatalf("slot %v outside the window's days %v", iv, days)
			}
			c.byDay[d] = append(c.byDay[d], iv)
		}
		// Free times after an empty window start at its end, or at its
		// start when it names a time of day; never on a day left out.
		nextFrom := w.End
		if !w.Daily.IsZero() || !w.Starts.IsZero() {
			nextFrom = w.Start
		}
		c.next = schedule.Slots(schedule.SlotParams{Hours: hours, From: nextFrom, To: horizon,
			Duration: duration, Step: step, Busy: busy, Earliest: earliest, Except: w.Except})
		cands = append(cands, c)
	}
	if len(cands) == 0 {
		return nil, nil, false
	}
	slices.SortFunc(cands, func(a, b full) int { return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.id, b.id)) })
	in := make(refInput, len(cands))
	for i, c := range cands {
		in[i] = c.refCand
	}
	var out []refOption
	for _, p := range booking.RankOptions(in, len(days), maxOptions, maxPerProvider, maxOptions) {
		out = append(out, refOption{in[p.Cand].id, p.Slot.Start, p.Slot.End})
	}
	var next []schedule.Interval
	if len(out) == 0 {
		var all []schedule.Interval
		for _, c := range cands {
			all = append(all, c.next...)
		}
		slices.SortFunc(all, func(a, b schedule.Interval) int { return cmp.Or(a.Start.Compare(b.Start), a.End.Compare(b.End)) })
		all = slices.CompactFunc(all, func(a, b schedule.Interval) bool { return a.Start.Equal(b.Start) })
		next = all[:min(len(all), booking.MaxNextAvailable)]
	}
	return out, next, true
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func optionsOf(res booking.Result) []refOption {
	var out []refOption
	for _, o := range res.Options {
		out = append(out, refOption{o.Provider.ID, o.Slot.Start.UTC(), o.Slot.End.UTC()})
	}
	return out
}

// randomSupply puts n random providers: hours, coverage, notice, horizon,
// prices and durations, blocked periods.
func randomSupply(tb testing.TB, db *sqlstore.DB, rng *rand.Rand, n int, now time.Time) []string {
	tb.Helper()
	ctx := context.Background()
	var ids []string
	err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
		for i := range n {
			id := fmt.Sprintf("prv_rand_%02d", i)
			ids = append(ids, id)
			p := bokat.ProviderSupply{Provider: bokat.Provider{ID: id, Name: "Slump " + id, Email: id + "@slump.example",
				Active: rng.IntN(8) > 0, MinNoticeMinutes: []int{0, 30, 120, 24 * 60}[rng.IntN(4)], HorizonDays: 2 + rng.IntN(30)}}
			// Coverage: one or two ranges around 111–118.
			for range 1 + rng.IntN(2) {
				from := 11100 + rng.IntN(8)*100
				p.Postcodes = append(p.Postcodes, bokat.PostcodeRange{From: from, To: from + 99 + rng.IntN(3)*100})
			}
			for wd := time.Sunday; wd <= time.Saturday; wd++ {
				if rng.IntN(4) == 0 {
					continue
				}
				start := 6*60 + rng.IntN(8)*30
				end := start + 60 + rng.IntN(16)*30
				p.Hours = append(p.Hours, bokat.WorkingRange{Weekday: wd, StartMinute: start, EndMinute: min(end, 1440)})
				if end < 1200 && rng.IntN(3) == 0 {
					p.Hours = append(p.Hours, bokat.WorkingRange{Weekday: wd, StartMinute: end + 60, EndMinute: min(end+60+rng.IntN(8)*30+30, 1440)})
				}
			}
			p.Services = []bokat.ProviderService{
				{ServiceID: "vvs_install_faucet_standard", PriceSEK: 1500 + int64(rng.IntN(900)),
					Duration: bokat.DurationOverride{FixedMinutes: []int{0, 45, 60, 90, 150}[rng.IntN(5)]}},
			}
			if rng.IntN(2) == 0 {
				p.Services = append(p.Services, bokat.ProviderService{ServiceID: "cleaning_window_per_window", UnitPriceSEK: 89, MinimumChargeSEK: 795})
			}
			for k := range rng.IntN(8) {
				s := now.Add(time.Duration(rng.IntN(20*24)) * time.Hour).Truncate(30 * time.Minute)
				p.Blocked = append(p.Blocked, bokat.BlockedPeriod{ID: fmt.Sprintf("blk_%s_%d", id, k), Start: s,
					End: s.Add(time.Duration(1+rng.IntN(40)) * 30 * time.Minute)})
			}
			if _, err := tx.PutProviderSupply(ctx, p, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("random supply: %v", err)
	}
	return ids
}

// book stores a confirmed booking of the provider over [start, end), and
// reports false when it overlaps another booking.
func book(tb testing.TB, db *sqlstore.DB, provider, id string, start, end time.Time) bool {
	tb.Helper()
	err := sqlstoretest.TryInsertBookingEntry(db, provider, id, start, end)
	if errors.Is(err, booking.ErrSlotTaken) {
		return false
	}
	if err != nil {
		tb.Fatalf("book %s: %v", id, err)
	}
	return true
}

var propertyTexts = []string{
	"i dag", "i morgon", "nästa vecka", "inom två veckor", "flexibel", "torsdag förmiddag", "efter 15",
	"i helgen", "inom en vecka", "fredag eftermiddag", "om tre dagar", "på kvällen", "denna vecka", "",
	"i morgon kl 9", "kl 10:30", "nästa vecka men inte fredag", "utom måndag och onsdag", "helst tidigt i veckan",
}

// TestIndexedSearchEqualsBruteForce compares the indexed search with the
// reference on random supplies, calendars, windows and limits, with
// random writes between searches, on every engine.
func TestIndexedSearchEqualsBruteForce(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		seeds := 6
		if db.Engine() == sqlstore.Postgres {
			seeds = 3
		}
		for seed := range uint64(seeds) {
			if seed > 0 {
				db = sqlstoretest.Open(t, db.Engine())
			}
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { propertyRun(t, db, seed) })
		}
	})
}

func propertyRun(t *testing.T, db *sqlstore.DB, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0xb0ca7))
	ctx := context.Background()
	now := local(2026, 11, 23, 7, 0).Add(time.Duration(rng.IntN(14*24)) * time.Hour)
	ids := randomSupply(t, db, rng, 4+rng.IntN(14), now)
	limits := []func(*booking.Config){
		func(*booking.Config) {},
		func(c *booking.Config) { c.MaxPerProvider, c.MaxOptions = 1, 4 },
		func(c *booking.Config) { c.MaxPerProvider, c.MaxOptions = 2, 25 },
		func(c *booking.Config) { c.SlotStep = 30 * time.Minute },
	}
	f := newFixture(t, db, "", now, limits[rng.IntN(len(limits))])
	var booked []string
	nBook, empty, withNext, options := 0, 0, 0, 0
	for round := range 40 {
		// Move the clock on, now and then by days.
		if rng.IntN(10) == 0 {
			f.clock.Advance(time.Duration(1+rng.IntN(3)) * 24 * time.Hour)
		} else {
			f.clock.Advance(time.Duration(rng.IntN(120)) * time.Minute)
		}
		q := query("vvs", "install_faucet", fmt.Sprintf("1%d%d %02d", 1+rng.IntN(2), 1+rng.IntN(9), rng.IntN(100)),
			propertyTexts[rng.IntN(len(propertyTexts))])
		if rng.IntN(4) == 0 {
			q = query("cleaning", "cleaning_window", q.Postcode, q.PreferredTimeText)
			q.Details = map[string]any{"window_count": 1 + rng.IntN(30)}
		}
		res := f.run(t, q)
		got := optionsOf(res)
		want, wantNext, covered := reference(t, f.search, db, q, res.Window, f.clock.Now())
		if !covered {
			if res.FallbackReason != booking.ReasonNoCoverage {
				t.Fatalf("round %d %+v: reason %q, want %q", round, q, res.FallbackReason, booking.ReasonNoCoverage)
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d %q at %s (window %s – %s):\n got %v\nwant %v", round, q.PreferredTimeText, f.clock.Now(),
				res.Window.Start, res.Window.End, got, want)
		}
		var gotNext []schedule.Interval
		for _, n := range res.NextAvailable {
			gotNext = append(gotNext, n.Slot)
			if n.Label != schedule.SlotLabel(n.Slot, "sv-SE") {
				t.Errorf("next available label %q", n.Label)
			}
		}
		if !slices.EqualFunc(gotNext, wantNext, func(a, b schedule.Interval) bool { return a.Start.Equal(b.Start) && a.End.Equal(b.End) }) {
			t.Fatalf("round %d %q: next available\n got %v\nwant %v", round, q.PreferredTimeText, gotNext, wantNext)
		}
		checkFree(t, db, res.Options)
		if len(got) == 0 {
			empty++
			if len(gotNext) > 0 {
				withNext++
			}
		}
		options += len(got)

		// Random writes through the real store.
		for range rng.IntN(4) {
			switch k := rng.IntN(5); {
			case k <= 1 && len(res.Options) > 0: // book an offered slot
				o := res.Options[rng.IntN(len(res.Options))]
				id := fmt.Sprintf("bk_%d_%d", seed, nBook)
				nBook++
				if book(t, db, o.Provider.ID, id, o.Slot.Start, o.Slot.End) {
					booked = append(booked, id)
				}
			case k == 2 && len(booked) > 0: // cancel
				i := rng.IntN(len(booked))
				id := booked[i]
				booked = slices.Delete(booked, i, i+1)
				err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
					return tx.CancelBooking(ctx, bokat.Booking{ID: id, CancelledAt: f.clock.Now(), CancelReason: "customer_request", Sequence: 1}, "", f.clock.Now())
				})
				if err != nil {
					t.Fatal(err)
				}
			default: // block a random period of a random provider
				id := ids[rng.IntN(len(ids))]
				err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
					p, err := tx.ProviderSupply(ctx, id)
					if err != nil {
						return err
					}
					s := f.clock.Now().Add(time.Duration(rng.IntN(10*24)) * time.Hour).Truncate(time.Hour)
					p.Blocked = append(p.Blocked, bokat.BlockedPeriod{ID: fmt.Sprintf("blk_w_%d_%d", seed, round), Start: s,
						End: s.Add(time.Duration(1+rng.IntN(10)) * time.Hour)})
					if len(p.Blocked) > 3 && rng.IntN(2) == 0 {
						p.Blocked = p.Blocked[1:] // and lift an older one
					}
					_, err = tx.PutProviderSupply(ctx, p, f.clock.Now())
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	t.Logf("%d options, %d empty windows (%d with next_available), %d bookings", options, empty, withNext, nBook)
	if options == 0 {
		t.Error("no search had an option: the property compared nothing")
	}
}

// checkFree fails on an option that overlaps an active calendar entry of
// its provider, read from the store.
func checkFree(tb testing.TB, db *sqlstore.DB, opts []booking.Option) {
	tb.Helper()
	for _, o := range opts {
		entries, err := db.BusyEntries(context.Background(), []string{o.Provider.ID}, o.Slot.Start, o.Slot.End)
		if err != nil {
			tb.Fatal(err)
		}
		if len(entries) > 0 {
			tb.Fatalf("option %s %s overlaps %+v", o.Provider.ID, o.Slot.Start, entries[0])
		}
	}
}

// TestTwoProcessesSeeEachOthersBookings runs two searches on two
// connection pools of one PostgreSQL database, as two serve processes do:
// a booking committed through one is never offered by a search on the
// other that starts after the commit, while a third searcher keeps the
// second's index refreshing concurrently.
func TestTwoProcessesSeeEachOthersBookings(t *testing.T) {
	t.Parallel()
	if !slices.Contains(sqlstoretest.Engines(), sqlstore.Postgres) {
		t.Skip("needs PostgreSQL: set " + sqlstoretest.PostgresURLEnv)
	}
	u := sqlstoretest.URL(t, sqlstore.Postgres)
	vault := sqlstoretest.Vault(t) // the processes share the secret key, as serve processes do
	open := func() *sqlstore.DB {
		db, err := sqlstore.Open(context.Background(), u, sqlstore.WithVault(vault))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	dbA, dbB := open(), open()
	now := local(2026, 11, 23, 7, 0)
	a := newFixture(t, dbA, withBlocked, now)
	b := newFixture(t, dbB, "", now)
	q := query("vvs", "install_faucet", "113 45", "inom två veckor")
	if len(b.run(t, q).Options) == 0 {
		t.Fatal("no options to start with")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Add(1)
	go func() { // keeps B's index busy refreshing
		defer wg.Done()
		for ctx.Err() == nil {
			if _, err := b.search.Search(ctx, q); err != nil && ctx.Err() == nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := range 40 {
		opts := b.run(t, q).Options
		if len(opts) == 0 {
			break
		}
		o := opts[i%len(opts)]
		if !book(t, a.db, o.Provider.ID, fmt.Sprintf("bk_two_%d", i), o.Slot.Start, o.Slot.End) {
			t.Fatalf("the slot %s of %s offered by B was already booked", o.Slot.Start, o.Provider.ID)
		}
		// Committed through A: B must not offer it any more.
		for _, p := range b.run(t, q).Options {
			if p.Provider.ID == o.Provider.ID && p.Slot.Overlaps(o.Slot) {
				t.Fatalf("B offers %s %s after A committed a booking over it", p.Provider.ID, p.Slot.Start)
			}
		}
	}
}

// TestWarmBuildsTheIndex: after Warm a search finds the index at the
// store's revisions, and Warm follows a later booking.
func TestWarmBuildsTheIndex(t *testing.T) {
	t.Parallel()
	f := sqliteFixture(t, oneProvider, local(2026, 11, 23, 6, 0))
	if booking.Index(f.search) != nil {
		t.Fatal("an index before any search")
	}
	if err := f.search.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	ix := booking.Index(f.search)
	supplyRev, calRev, err := f.db.Revisions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ix == nil || ix.SupplyRevision != supplyRev || ix.CalendarRevision != calRev || ix.Services == 0 {
		t.Fatalf("index after Warm: %+v (store at %d/%d)", ix, supplyRev, calRev)
	}
	insertBooking(t, f.db, "prv_one", "bk_warm", local(2026, 11, 23, 8, 0), local(2026, 11, 23, 9, 0))
	if err := f.search.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := booking.Index(f.search).Busy["prv_one"]; got == nil || len(got) != 1 || !got[0] {
		t.Errorf("the booking is not in the index after Warm: %+v", got)
	}
}
