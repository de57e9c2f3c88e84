package supplytest

import (
	"context"
	"testing"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

func TestLoadMakesBookingsAtFreeWorkingHours(t *testing.T) {
	t.Parallel()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	from := schedule.NewDate(2026, 11, 23)
	now := from.At(9*60 + 30)
	o := Options{GenerateOptions: supply.GenerateOptions{Providers: 12, Seed: 4, From: from, BusyHours: 40}, BookingsPerProvider: 5}
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		providers := Load(t, db, cat, o, now)
		if len(providers) != 12 {
			t.Fatalf("%d providers, want 12", len(providers))
		}
		ids := make([]string, len(providers))
		for i, p := range providers {
			ids[i] = p.ID
		}
		entries, err := db.BusyEntries(ctx, ids, from.At(0), from.AddDays(14).At(0))
		if err != nil {
			t.Fatal(err)
		}
		byProvider := map[string][]bokat.CalendarEntry{}
		for _, e := range entries {
			byProvider[e.ProviderID] = append(byProvider[e.ProviderID], e)
		}
		for _, p := range providers {
			var booked, blocked []bokat.CalendarEntry
			for _, e := range byProvider[p.ID] {
				if e.Kind == bokat.CalendarKindBooking {
					booked = append(booked, e)
				} else {
					blocked = append(blocked, e)
				}
			}
			if len(booked) != 5 || len(blocked) != 40 {
				t.Fatalf("%s: %d bookings and %d blocked periods, want 5 and 40", p.ID, len(booked), len(blocked))
			}
			for _, b := range booked {
				if !b.Start.After(now) || b.End.Sub(b.Start) != time.Hour {
					t.Errorf("%s: booking %v–%v is not a future hour", p.ID, b.Start, b.End)
				}
				for _, x := range blocked {
					if x.Start.Before(b.End) && b.Start.Before(x.End) {
						t.Errorf("%s: booking %v overlaps blocked %v", p.ID, b.Start, x.Start)
					}
				}
			}
		}
		again := sqlstoretest.Open(t, db.Engine())
		Load(t, again, cat, o, now)
		second, err := again.BusyEntries(ctx, ids, from.At(0), from.AddDays(14).At(0))
		if err != nil {
			t.Fatal(err)
		}
		if len(second) != len(entries) {
			t.Fatalf("second load has %d entries, want %d", len(second), len(entries))
		}
		for i := range second {
			if !second[i].Start.Equal(entries[i].Start) || second[i].ID != entries[i].ID {
				t.Fatalf("entry %d differs between loads: %+v vs %+v", i, second[i], entries[i])
			}
		}
	})
}
