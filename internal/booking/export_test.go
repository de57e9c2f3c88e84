package booking

import (
	"testing"
	"time"

	"bokat/internal/schedule"
)

// What the external tests (package booking_test, which open a real store
// and so cannot be part of this package) need of its unexported parts: the
// pieces of search that the brute-force reference of index_test.go reuses,
// and a view of the availability index.

const MaxNextAvailable = maxNextAvailable

// Helpers of option_test.go that the external tests use too.
var (
	TestKey     = key
	MustKeyring = mustKeyring
	WantCode    = wantCode
)

// SignV1 returns the bo1 id of c, as the releases before bo2 issued it.
func SignV1(k *Keyring, tb testing.TB, c OptionClaims) string { return k.signV1(tb, c) }

var (
	WindowDays     = windowDays
	WeeklyHours    = weeklyHours
	RotationPeriod = rotationPeriod
	RotationHash   = rotationHash
)

// Limits returns the search's slot step and its bounds on options.
func Limits(s *Search) (step time.Duration, maxOptions, maxPerProvider int) {
	return s.step, s.maxOptions, s.maxPerProvider
}

// RankInput is rankInput with exported methods.
type RankInput interface {
	Candidates() int
	Hash(i int) uint64
	Bookings(i int) int
	Slots(i, day int) []schedule.Interval
}

type rankAdapter struct{ RankInput }

func (a rankAdapter) candidates() int    { return a.Candidates() }
func (a rankAdapter) hash(i int) uint64  { return a.Hash(i) }
func (a rankAdapter) bookings(i int) int { return a.Bookings(i) }
func (a rankAdapter) free(i, days int) bool {
	for d := range days {
		if len(a.Slots(i, d)) > 0 {
			return true
		}
	}
	return false
}

func (a rankAdapter) slots(i, day int) []rankSlot {
	var out []rankSlot
	for _, iv := range a.Slots(i, day) {
		out = append(out, newRankSlot(iv))
	}
	return out
}

// RankPick is a rankPick.
type RankPick struct {
	Cand int
	Slot schedule.Interval
}

// RankOptions is rankOptions.
func RankOptions(in RankInput, days, sample, maxPer, maxTotal int) []RankPick {
	var out []RankPick
	for _, p := range rankOptions(rankAdapter{in}, days, sample, maxPer, maxTotal) {
		out = append(out, RankPick{Cand: p.cand, Slot: p.slot.interval()})
	}
	return out
}

// IndexView is what the tests look at of a search's availability index.
type IndexView struct {
	SupplyRevision, CalendarRevision int64
	// Services is the number of services some active provider offers.
	Services int
	// Busy holds, per provider with busy intervals, whether each interval
	// (in order of start) is a booking (else a blocked period).
	Busy map[string][]bool
}

// Index returns a view of the search's current index, nil before one is
// built.
func Index(s *Search) *IndexView {
	ix := s.idx.Load()
	if ix == nil {
		return nil
	}
	v := &IndexView{SupplyRevision: ix.snap.revision, CalendarRevision: ix.calRev, Services: len(ix.snap.byService),
		Busy: make(map[string][]bool, len(ix.busy))}
	for id, b := range ix.busy {
		v.Busy[id] = b.booking
	}
	return v
}

// SettleReloads waits for the reloads of s beside its index in use.
func SettleReloads(s *Search) { s.reloads.Wait() }
