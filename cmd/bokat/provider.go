package main

import (
	"context"
	"errors"
	"fmt"

	"bokat"
	"bokat/internal/wire"
)

// runProviderFeedURL prints the secret calendar feed address of each named
// provider, or of every provider when none is named: one "<id> <url>" line
// each. The address is derived from the token pepper and the base URL, so
// it must run with the same --token-pepper (or, in development, the same
// database) and --base-url as serve.
func runProviderFeedURL(ctx context.Context, args []string, e env) error {
	sc := newStoreCommand("provider feed-url", e)
	var baseURL string
	sc.fs.Text(&baseURL, "base-url", "BOKAT_BASE_URL", "http://127.0.0.1:8080", "public base URL of the service, as given to serve", checkBaseURL)
	ids, err := sc.parse(args, nil)
	if err != nil {
		return err
	}
	db, hasher, err := sc.openHashed(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	feed, err := wire.CalendarFeed(wire.Keys{Hasher: hasher}, db, baseURL, e.now)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		s, err := db.LoadSupply(ctx)
		if err != nil {
			return err
		}
		for _, p := range s.Providers {
			ids = append(ids, p.ID)
		}
	}
	for _, id := range ids {
		if _, err := db.ProviderName(ctx, id); errors.Is(err, bokat.ErrNotFound) {
			return fmt.Errorf("no provider %q", id)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s %s\n", id, feed.URL(id))
	}
	return nil
}
