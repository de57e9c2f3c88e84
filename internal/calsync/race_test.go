package calsync_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"bokat"
	"bokat/internal/calsync"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// interleaved is the real store with hands that act once, just before the
// next transaction begins: as if they came between a use case's reads and
// its write.
type interleaved struct {
	calsync.Store
	hands func()
}

func (s *interleaved) InTx(ctx context.Context, fn func(calsync.Tx) error) error {
	if hands := s.hands; hands != nil {
		s.hands = nil
		hands()
	}
	return s.Store.InTx(ctx, fn)
}

// TestCalendarLimit: a provider has at most MaxFeedsPerProvider calendars,
// added by hand or by an import; an import's removals make room first.
func TestCalendarLimit(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		e := newSyncEnv(t, db)
		file := supplyFile(0, calsync.MaxFeedsPerProvider+2)
		res, err := e.feeds.ApplySupply(ctx, file)
		if err != nil || res.Added != calsync.MaxFeedsPerProvider || len(res.Refused) != 2 ||
			res.Refused[0] != providerID+" calendar on "+publicHost+": url: a provider has at most 10 calendars" {
			t.Fatalf("a file naming 12 calendars = %+v, %v; want 10 added, 2 refused", res, err)
		}
		_, err = e.feeds.Add(ctx, providerID, feedURL("/own.ics"), "", calsync.SourceProvider)
		if !isInvalid(err, "url: a provider has at most 10 calendars") {
			t.Fatalf("an 11th calendar by hand: %v", err)
		}
		// The next file drops three and names three new: they fit.
		if res, err = e.feeds.ApplySupply(ctx, supplyFile(3, calsync.MaxFeedsPerProvider+3)); err != nil || res.Added != 3 ||
			res.Removed != 3 || res.Kept != 7 || len(res.Refused) != 0 {
			t.Fatalf("a file swapping three calendars = %+v, %v; want 3 removed, 3 added", res, err)
		}
		if feeds, err := e.feeds.List(ctx, providerID); err != nil || len(feeds) != calsync.MaxFeedsPerProvider {
			t.Fatalf("%d feeds (%v), want %d", len(feeds), err, calsync.MaxFeedsPerProvider)
		}
	})
}

// TestImportDecidesInItsTransaction: an import plans from what it read
// before its transaction, and the provider's hands may act in between. It
// still decides on what the provider has when it writes: a calendar removed
// by hand in between is left out (its removal stands), one added by hand in
// between is kept (the import does not fail on it), one it meant to remove
// that the provider removed is not counted, and the limit counts the
// calendars added in between. So does a single add by hand.
func TestImportDecidesInItsTransaction(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		e := newSyncEnv(t, db)
		store := &interleaved{Store: sqlstore.Bind[calsync.Tx](db)}
		feeds := calsync.NewFeeds(store, e.server.fetchConfig().Guard, e.clock.Now)
		res, err := feeds.ApplySupply(ctx, supplyFile(0, 2)) // c00, c01 from the file
		if err != nil || res.Added != 2 {
			t.Fatalf("first file = %+v, %v", res, err)
		}
		c01 := res.Changes[0].Added[1]

		// The next file drops c01 and names x, y and z. In between, the
		// provider adds x and removes it again, adds y, and removes c01.
		store.hands = func() {
			x, err := e.feeds.Add(ctx, providerID, feedURL("/x.ics"), "", calsync.SourceProvider)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.feeds.Remove(ctx, providerID, x.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := e.feeds.Add(ctx, providerID, feedURL("/y.ics"), "", calsync.SourceProvider); err != nil {
				t.Fatal(err)
			}
			if err := e.feeds.Remove(ctx, providerID, c01.ID); err != nil {
				t.Fatal(err)
			}
		}
		next := supplyFile(0, 1)
		next[0].Calendars = append(next[0].Calendars, bokat.CalendarSubscription{URL: feedURL("/x.ics")},
			bokat.CalendarSubscription{URL: feedURL("/y.ics")}, bokat.CalendarSubscription{URL: feedURL("/z.ics")})
		res, err = feeds.ApplySupply(ctx, next)
		if err != nil || res.Added != 1 || res.Kept != 2 || res.Removed != 0 || res.Dismissed != 1 || len(res.Changes) != 1 ||
			len(res.Changes[0].Added) != 1 || len(res.Changes[0].Removed) != 0 ||
			!slices.Equal(res.Changes[0].Dismissed, []string{publicHost}) {
			t.Fatalf("the file after the hands = %+v, %v; want z added, c00 and y kept, x left out, nothing removed", res, err)
		}
		if got := feedPaths(t, e); !slices.Equal(got, []string{"/c00.ics supply", "/z.ics supply", "/y.ics provider"}) {
			t.Fatalf("feeds: %v", got)
		}
		if dismissed, err := db.FeedDismissed(ctx, providerID, feedURL("/x.ics")); err != nil || !dismissed {
			t.Errorf("x's removal by hand no longer holds: %v %v", dismissed, err)
		}

		// The provider fills the list to the limit in between: the
		// import's new calendar is refused, not an eleventh.
		store.hands = func() {
			for i := range calsync.MaxFeedsPerProvider - 3 {
				if _, err := e.feeds.Add(ctx, providerID, feedURL(fmt.Sprintf("/h%02d.ics", i)), "", calsync.SourceProvider); err != nil {
					t.Fatal(err)
				}
			}
		}
		next[0].Calendars = append(next[0].Calendars, bokat.CalendarSubscription{URL: feedURL("/w.ics")})
		if res, err = feeds.ApplySupply(ctx, next); err != nil || res.Added != 0 || len(res.Refused) != 1 ||
			!strings.HasSuffix(res.Refused[0], "url: a provider has at most 10 calendars") {
			t.Fatalf("the file after the list was filled = %+v, %v; want w refused", res, err)
		}

		// An add by hand that read nine calendars is refused when another
		// add makes ten first.
		last := feedPaths(t, e)
		if len(last) != calsync.MaxFeedsPerProvider {
			t.Fatalf("%d feeds, want %d: %v", len(last), calsync.MaxFeedsPerProvider, last)
		}
		if err := e.feeds.Remove(ctx, providerID, mustFeed(t, e, "/h00.ics").ID); err != nil {
			t.Fatal(err)
		}
		store.hands = func() {
			if _, err := e.feeds.Add(ctx, providerID, feedURL("/v.ics"), "", calsync.SourceProvider); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := feeds.Add(ctx, providerID, feedURL("/u.ics"), "", calsync.SourceProvider); !isInvalid(err,
			"url: a provider has at most 10 calendars") {
			t.Fatalf("an add raced to the eleventh calendar: %v", err)
		}
		// And one that raced an add of the same address is told so.
		store.hands = func() {
			if err := e.feeds.Remove(ctx, providerID, mustFeed(t, e, "/v.ics").ID); err != nil {
				t.Fatal(err)
			}
			if _, err := e.feeds.Add(ctx, providerID, feedURL("/t.ics"), "", calsync.SourceProvider); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := feeds.Add(ctx, providerID, feedURL("/t.ics"), "", calsync.SourceProvider); !isInvalid(err,
			"url: the provider already has this calendar") {
			t.Fatalf("an add raced by the same address: %v", err)
		}
	})
}

// supplyFile names the provider's calendars /cFROM.ics to /c(TO-1).ics.
func supplyFile(from, to int) []bokat.ProviderSupply {
	p := bokat.ProviderSupply{Provider: bokat.Provider{ID: providerID}}
	for i := from; i < to; i++ {
		p.Calendars = append(p.Calendars, bokat.CalendarSubscription{URL: feedURL(fmt.Sprintf("/c%02d.ics", i))})
	}
	return []bokat.ProviderSupply{p}
}

// feedPaths lists the provider's feeds as "PATH SOURCE", oldest first.
func feedPaths(t *testing.T, e *syncEnv) []string {
	t.Helper()
	feeds, err := e.feeds.List(context.Background(), providerID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range feeds {
		out = append(out, strings.TrimPrefix(f.URL, "https://"+publicHost)+" "+f.Source)
	}
	return out
}

// mustFeed is the provider's feed at path.
func mustFeed(t *testing.T, e *syncEnv, path string) calsync.Feed {
	t.Helper()
	feeds, err := e.feeds.List(context.Background(), providerID)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range feeds {
		if f.URL == feedURL(path) {
			return f
		}
	}
	t.Fatalf("no feed at %s", path)
	return calsync.Feed{}
}

// isInvalid reports whether err is validation_failed with the one issue.
func isInvalid(err error, issue string) bool {
	be, ok := err.(*bokat.Error)
	return ok && be.Code == bokat.CodeValidationFailed && slices.Equal(be.Issues, []string{issue})
}
