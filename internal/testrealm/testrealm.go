// Package testrealm is the test realm's supply: the magic test providers
// (bokat.TestProvider*), offering every seeded service of the catalog
// everywhere in Sweden, each with one predictable behaviour, so that an
// integrator tries confirm, a taken slot, a failing provider message or a
// follow-up request with a test credential and never reaches a real
// provider (docs/testing.md).
package testrealm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/supply"
)

// SupplyName names the test realm's supply in import results and logs.
const SupplyName = "test realm"

// Test providers' prices: what a fixed or starting price costs, and what a
// unit costs.
const (
	PriceSEK     = 1000
	UnitPriceSEK = 500
)

// magic is one magic provider: its id, name and address.
type magic struct{ id, name, email string }

var providers = []magic{
	{bokat.TestProviderFree, "Test: alltid ledig", "free@test.bokat.invalid"},
	{bokat.TestProviderTaken, "Test: upptagen vid bekräftelse", "taken@test.bokat.invalid"},
	{bokat.TestProviderUnreachable, "Test: meddelandet når inte fram", bokat.TestUnreachableEmail},
	{bokat.TestProviderFollowUpOnly, "Test: bara förfrågan", "followup@test.bokat.invalid"},
	{bokat.TestProviderCancels, "Test: avbokar efter en timme", "cancels@test.bokat.invalid"},
}

// Supply returns the magic test providers, in the test realm, each offering
// every seeded service of cat at PriceSEK (or UnitPriceSEK a unit), working
// every day 07:00–21:00 in every postcode.
func Supply(cat *catalog.Catalog) []bokat.ProviderSupply {
	var services []bokat.ProviderService
	for _, id := range cat.ServiceIDs() {
		svc, _ := cat.Service(id)
		offer := bokat.ProviderService{ServiceID: id, PriceSEK: PriceSEK}
		if svc.PricingModel.PerUnit() {
			offer = bokat.ProviderService{ServiceID: id, UnitPriceSEK: UnitPriceSEK}
		}
		services = append(services, offer)
	}
	var hours []bokat.WorkingRange
	for d := time.Sunday; d <= time.Saturday; d++ {
		hours = append(hours, bokat.WorkingRange{Weekday: d, StartMinute: 7 * 60, EndMinute: 21 * 60})
	}
	out := make([]bokat.ProviderSupply, 0, len(providers))
	for _, m := range providers {
		out = append(out, bokat.ProviderSupply{
			Provider: bokat.Provider{ID: m.id, Name: m.name, City: "Testby", Email: m.email, Active: true,
				Mode: bokat.ModeTest, MinNoticeMinutes: 30, HorizonDays: 30},
			Postcodes: []bokat.PostcodeRange{{From: 10000, To: 99999}},
			Services:  append([]bokat.ProviderService(nil), services...),
			Hours:     hours,
		})
	}
	return out
}

// seedAttempts bounds how often Seed runs its import when a concurrent
// seeder wrote the same rows first.
const seedAttempts = 4

// Seed stores the test realm's supply; it changes nothing when it is
// already stored as Supply returns it. It is idempotent under concurrency:
// several servers starting at once on one new database all seed without an
// error. The import is one transaction; when another seeder commits the
// same rows first (PostgreSQL refuses the second insert of a provider or
// of its services with a unique violation, bokat.ErrConflict), Seed runs
// the import again, which then reads the committed rows and changes
// nothing (or only what still differs). The magic providers' ids are
// reserved for this supply (no supply file may use them), so a conflict on
// them can only come from another seeder.
func Seed(ctx context.Context, st supply.Store, cat *catalog.Catalog, now time.Time) (supply.Result, error) {
	for attempt := 1; ; attempt++ {
		res, err := supply.ImportParsed(ctx, st, SupplyName, Supply(cat), now)
		switch {
		case err == nil:
			return res, nil
		case !errors.Is(err, bokat.ErrConflict) || attempt == seedAttempts:
			return res, fmt.Errorf("seed the test realm: %w", err)
		}
	}
}

// CancelAfter is how long after its confirmation TestProviderCancels
// cancels a booking.
const CancelAfter = time.Hour

// CancelReason is the reason its provider's cancellation gives (one of the
// contract's cancel reasons).
const CancelReason = "other"

// BookingStore runs booking transactions (sqlstore.Bind[booking.Tx]).
type BookingStore interface {
	// InTx runs fn in one write transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(booking.Tx) error) error
}

// DueStore finds the bookings to cancel (the store).
type DueStore interface {
	// DueTestCancellations returns the ids of the confirmed test bookings
	// of the provider confirmed at or before confirmedBefore, at most limit.
	DueTestCancellations(ctx context.Context, providerID string, confirmedBefore time.Time, limit int) ([]string, error)
}

// Canceller cancels the bookings of bokat.TestProviderCancels CancelAfter
// after their confirmation, as the provider would: the booking.cancelled
// event and the (captured) messages follow as for any cancellation.
type Canceller struct {
	bookings BookingStore
	due      DueStore
	now      func() time.Time
	log      *slog.Logger
}

// NewCanceller returns a Canceller on the stores, clock and logger.
func NewCanceller(bookings BookingStore, due DueStore, now func() time.Time, log *slog.Logger) *Canceller {
	return &Canceller{bookings: bookings, due: due, now: now, log: log}
}

// RunOnce cancels the bookings now due and returns how many it cancelled.
// A booking is due CancelAfter after its confirmation on its owner's test
// clock, so an owner who advances its clock by an hour sees it cancelled
// at the next round; the cancellation is made at the owner's now.
func (c *Canceller) RunOnce(ctx context.Context) (int, error) {
	server := c.now().UTC()
	ids, err := c.due.DueTestCancellations(ctx, bokat.TestProviderCancels, server.Add(-CancelAfter), 100)
	if err != nil {
		return 0, fmt.Errorf("find due test cancellations: %w", err)
	}
	n := 0
	for _, id := range ids {
		cancelled := false
		err := c.bookings.InTx(ctx, func(tx booking.Tx) error {
			cancelled = false
			b, err := tx.BookingByID(ctx, id)
			if err != nil {
				return err
			}
			if b.Status != bokat.BookingConfirmed || !b.Mode.Test() || b.ProviderID != bokat.TestProviderCancels {
				return nil // cancelled meanwhile
			}
			ctx, now, err := booking.OwnerNow(ctx, tx, b, server)
			if err != nil {
				return err
			}
			if b.ConfirmedAt.After(now.Add(-CancelAfter)) {
				return nil
			}
			cancelled = true
			return booking.CancelInTx(ctx, tx, b, CancelReason, now)
		})
		if err != nil {
			return n, fmt.Errorf("cancel test booking %s: %w", id, err)
		}
		if cancelled {
			n++
		}
	}
	return n, nil
}

// Run cancels due bookings every interval, and at once when wake (which
// may be nil) fires, until ctx ends; a failed round is logged and retried
// by the next.
func (c *Canceller) Run(ctx context.Context, interval time.Duration, wake *Waker) error {
	return runRounds(ctx, interval, wake, c.log, "test realm cancellations", c.RunOnce)
}

// Waker wakes the test realm's workers when a test clock moved, so that
// what became due on it happens at once rather than at their next round.
type Waker struct{ c chan struct{} }

// NewWaker returns a Waker for one worker.
func NewWaker() *Waker { return &Waker{c: make(chan struct{}, 1)} }

// Wake wakes the worker, or makes its next wait end at once. It never
// blocks.
func (w *Waker) Wake() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// runRounds runs round every interval and whenever wake fires until ctx
// ends, logging a failed round as what.
func runRounds(ctx context.Context, interval time.Duration, wake *Waker, log *slog.Logger, what string,
	round func(context.Context) (int, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	var woken chan struct{}
	if wake != nil {
		woken = wake.c
	}
	for {
		if _, err := round(ctx); err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, what, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-woken:
		}
	}
}
