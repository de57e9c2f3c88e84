// Package supplytest fills a store with a generated supply (supply.Generate)
// and real bookings, for tests and benchmarks that need a large, busy,
// reproducible supply.
package supplytest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
)

// Options are the generator's options and the number of bookings per
// provider.
type Options struct {
	supply.GenerateOptions
	// BookingsPerProvider one-hour bookings are made for each provider.
	BookingsPerProvider int
}

// Load imports a generated supply into db and books o.BookingsPerProvider
// one-hour jobs of each provider's first service at whole hours inside its
// working hours, on working days of o.Days days from o.From, after now, and
// neither blocked nor booked already. The hours are chosen from o.Seed, so
// the same options give the same bookings. Bookings are made through the
// store in one transaction (as confirmed bookings with their calendar
// entries; ids "bk_gen_<provider>_<n>"). It returns the providers as parsed.
func Load(tb testing.TB, db *sqlstore.DB, cat *catalog.Catalog, o Options, now time.Time) []bokat.ProviderSupply {
	tb.Helper()
	ctx := context.Background()
	var file bytes.Buffer
	if err := supply.Generate(&file, cat, o.GenerateOptions); err != nil {
		tb.Fatalf("generate: %v", err)
	}
	providers, err := supply.Parse("generated.yaml", file.Bytes(), cat)
	if err != nil {
		tb.Fatalf("parse the generated supply: %v", err)
	}
	if _, err := supply.ImportParsed(ctx, sqlstore.Bind[supply.Tx](db), "generated.yaml", providers, now); err != nil {
		tb.Fatalf("import the generated supply: %v", err)
	}
	if o.BookingsPerProvider <= 0 {
		return providers
	}
	days := o.Days
	if days == 0 {
		days = supply.DefaultHorizonDays
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x626f6f6b)) // "book"
	err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
		for _, p := range providers {
			free := freeHours(p, o.From, days, now)
			if len(free) < o.BookingsPerProvider {
				return fmt.Errorf("provider %s has %d free hours, fewer than %d bookings", p.ID, len(free), o.BookingsPerProvider)
			}
			svc, _ := cat.Service(p.Services[0].ServiceID)
			for k, i := range rng.Perm(len(free))[:o.BookingsPerProvider] {
				start := free[i]
				id := fmt.Sprintf("bk_gen_%s_%d", p.ID, k+1)
				b := bokat.Booking{
					ID: id, RequestID: "bkr_" + id, OwnerClientID: "pc_supplytest", Status: bokat.BookingConfirmed,
					ProviderID: p.ID, ProviderName: p.Name, ServiceID: svc.ID, VerticalID: svc.VerticalID,
					JobTypeID: svc.JobTypeID, ServiceLabelSV: svc.LabelSV, ServiceLabelEN: svc.LabelEN,
					SlotStart: start, SlotEnd: start.Add(time.Hour), PricingModel: string(svc.PricingModel),
					PriceType: string(svc.PriceType), PriceSEK: p.Services[0].PriceSEK, Quantity: 1,
					TermsVersion: catalog.TermsVersion(svc.ID), TermsAcceptedAt: now, Postcode: "11345",
					Locale: "sv-SE", Source: "supplytest", ConfirmedAt: now,
				}
				contact := bokat.BookingContact{Name: "Test Testsson", Phone: "070-000 00 00", Email: "kund@test.example",
					ServiceAddress: "Testgatan 1, 113 45 Stockholm"}
				if err := tx.InsertBooking(ctx, b, contact, bokat.BookingConsent{}, "cal_"+id, now); err != nil {
					return fmt.Errorf("book %s: %w", id, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("make bookings: %v", err)
	}
	return providers
}

// freeHours returns the provider's whole working hours of the period that
// start after now and overlap none of its blocked periods, in time order.
func freeHours(p bokat.ProviderSupply, from schedule.Date, days int, now time.Time) []time.Time {
	var out []time.Time
	for d := range days {
		day := from.AddDays(d)
		if off, _ := schedule.IsNonWorkingDay(day); off {
			continue
		}
		for _, h := range p.Hours {
			if h.Weekday != day.Weekday() {
				continue
			}
			for m := (h.StartMinute + 59) / 60 * 60; m+60 <= h.EndMinute; m += 60 {
				start, end := day.At(m), day.At(m+60)
				if !start.After(now) {
					continue
				}
				blocked := false
				for _, b := range p.Blocked {
					if b.Start.Before(end) && start.Before(b.End) {
						blocked = true
						break
					}
				}
				if !blocked {
					out = append(out, start)
				}
			}
		}
	}
	return out
}
