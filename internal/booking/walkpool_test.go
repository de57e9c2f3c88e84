package booking_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"bokat/internal/booking"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestSearchWalkReuse: searches reuse the scratch memory of earlier ones
// (the walk's state, slots and day spans), so a search must answer the
// same whatever ran before it, and concurrent searches must not share
// it. Searches of different windows, candidate counts and outcomes
// (options, next available, beyond the horizon) run in turn and at once
// on 300 providers, and each must answer what it answered alone, on each
// engine.
func TestSearchWalkReuse(t *testing.T) {
	now := local(2026, 11, 23, 9, 0)
	queries := []booking.Query{
		query("vvs", "install_faucet", "113 45", "inom två veckor"),
		query("vvs", "install_faucet", "113 45", "på söndag"),
		query("vvs", "install_faucet", "113 45", "julafton"),
		query("vvs", "install_faucet", "113 45", "i morgon eftermiddag"),
		query("vvs", "install_faucet", "113 45", "på fredag kl 16"),
	}
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			db := sqlstoretest.Open(t, engine)
			scaleSupply(t, db, 300, 40, 7, now)
			f := newFixture(t, db, "", now)
			// What each search answers alone, on a fresh Search (whose
			// walks come from the same pool: each runs first on it).
			want := make([]string, len(queries))
			for i, q := range queries {
				want[i] = resultKey(newFixture(t, db, "", now).run(t, q))
			}
			if want[0] == want[1] || len(f.run(t, queries[0]).Options) != 10 {
				t.Fatalf("the searches do not differ, or the first has no ten options: %s", want[0])
			}
			for round := range 3 {
				for k := range queries {
					i := (k + round) % len(queries)
					if got := resultKey(f.run(t, queries[i])); got != want[i] {
						t.Fatalf("round %d, %q after others:\n got %s\nwant %s", round, queries[i].PreferredTimeText, got, want[i])
					}
				}
			}
			var wg sync.WaitGroup
			errs := make(chan string, 8*len(queries))
			for range 8 {
				for i, q := range queries {
					wg.Go(func() {
						res, err := f.search.Search(context.Background(), q)
						if err != nil {
							errs <- err.Error()
						} else if got := resultKey(res); got != want[i] {
							errs <- fmt.Sprintf("%q at once with others:\n got %s\nwant %s", q.PreferredTimeText, got, want[i])
						}
					})
				}
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
		})
	}
}

// resultKey is what a search answered, but for the options' ids (whose
// nonces differ each time).
func resultKey(res booking.Result) string {
	s := fmt.Sprintf("%s %s %v;", res.FallbackReason, res.LastBookableDate, res.NextAvailable)
	for _, o := range res.Options {
		s += fmt.Sprintf(" %s %s–%s %d %s;", o.Provider.ID, o.Slot.Start.Format("01-02T15:04"), o.Slot.End.Format("15:04"),
			o.Price.AmountSEK, o.SlotLabel)
	}
	return s
}
