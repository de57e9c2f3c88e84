package booking_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// Over many searches every eligible provider is shown: the rotation moves on
// every quarter-hour, so a day's searches for one postcode sample far more
// providers than the ten one search looks at. Within one quarter-hour the
// answer is the same (the ranking is deterministic for a query at an instant).
func TestRotationShowsEveryProviderOverADay(t *testing.T) {
	t.Parallel()
	const providers = 60
	start := local(2026, 11, 23, 0, 0) // a Monday
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	scaleSupply(t, db, providers, 0, 1, start)
	f := newFixture(t, db, "", start)
	q := query("vvs", "install_faucet", "11345", "nästa vecka")

	shown := map[string]bool{}
	for quarter := range 96 {
		f.clock.Set(start.Add(time.Duration(quarter) * 15 * time.Minute).UTC())
		res := f.run(t, q)
		if len(res.Options) != booking.DefaultMaxOptions {
			t.Fatalf("quarter %d: %d options, want %d", quarter, len(res.Options), booking.DefaultMaxOptions)
		}
		for _, o := range res.Options {
			shown[o.Provider.ID] = true
		}
		if quarter == 0 {
			// Another search later in the same quarter-hour gives the same providers and times.
			f.clock.Set(start.Add(14 * time.Minute).UTC())
			again := f.run(t, q)
			for i := range res.Options {
				a, b := res.Options[i], again.Options[i]
				if a.Provider.ID != b.Provider.ID || !a.Slot.Start.Equal(b.Slot.Start) {
					t.Fatalf("option %d differs within one quarter-hour: %s %v vs %s %v", i, a.Provider.ID, a.Slot.Start, b.Provider.ID, b.Slot.Start)
				}
			}
		}
	}
	var missing []string
	for i := range providers {
		if id := fmt.Sprintf("prv_scale_%05d", i); !shown[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d providers never shown in a day of searches: %v", len(missing), providers, missing)
	}
}

// countingStore counts the full availability reads of a Search.
type countingStore struct {
	*sqlstore.DB
	full atomic.Int32
}

func (c *countingStore) ReadAvailability(ctx context.Context, supplyRev, calendarRev int64, full bool, endAfter time.Time,
	supply func([]bokat.ProviderSupply) error) (booking.Availability, error) {
	if full {
		c.full.Add(1)
		time.Sleep(50 * time.Millisecond) // a build takes a while: let the others queue behind it
	}
	return c.DB.ReadAvailability(ctx, supplyRev, calendarRev, full, endAfter, supply)
}

// Searches that arrive while the index is being built (at start, during the
// warm-up) wait for that build and check it against the store's revisions;
// they never build a second index (each build holds the whole calendar in
// memory once more).
func TestConcurrentFirstSearchesBuildTheIndexOnce(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 23, 9, 0)
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	scaleSupply(t, db, 30, 5, 1, now)
	store := &countingStore{DB: db}
	s, err := booking.NewSearch(booking.Config{Catalog: testCatalog(t), Store: store, Keys: mustKeyring(t, key("test", 3)), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	q := query("vvs", "install_faucet", "11345", "nästa vecka")
	var wg sync.WaitGroup
	errs := make(chan error, 9)
	wg.Add(1)
	go func() { defer wg.Done(); errs <- s.Warm(context.Background()) }()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Search(context.Background(), q)
			if err == nil && len(res.Options) == 0 {
				err = fmt.Errorf("no options: %s", res.FallbackReason)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := store.full.Load(); n != 1 {
		t.Errorf("%d full index builds for one warm-up and 8 concurrent first searches, want 1", n)
	}
}
