package provider_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"bokat/internal/catalog"
	"bokat/internal/clocktest"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// FuzzSupplyInputs feeds what a form or an API body may carry into every
// supply use case: each either succeeds or is refused with ErrInvalid (a
// block also with *BookingInTheWay), and a refusal writes nothing: neither
// the supply nor the calendar revision moves.
func FuzzSupplyInputs(f *testing.F) {
	f.Add("2026-03-04", "", "08:00", "12:00", 1, "Kurs", "08:00-17:00", "1890", "111-118", "2026-03-10")
	f.Add("2026-03-04", "2026-03-06", "", "", 2, "", "08:00-12:00, 13:00-17:00", "0", "113 45\n116", "")
	f.Add("2026-13-40", "x", "25:00", "07:00", 99, "a\x00b", "17:00-08:00", "-5", "0123", "2020-01-01")
	f.Add("2026-03-02", "", "00:00", "24:00", 52, strings.Repeat("ö", 201), "monday", "abc", "111-", "2027-12-31")
	cat, err := catalog.Load()
	if err != nil {
		f.Fatal(err)
	}
	db := sqlstoretest.Open(f, sqlstore.SQLite)
	clock := clocktest.New(time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC))
	ctx := context.Background()
	if _, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat, supply.DemoName, supply.Demo(), clock.Now()); err != nil {
		f.Fatal(err)
	}
	sqlstoretest.InsertBookingEntry(f, db, providerA, "bk_fuzz", clock.Now().Add(48*time.Hour), clock.Now().Add(50*time.Hour))
	sup := provider.NewSupply(sqlstore.Bind[provider.SupplyTx](db), cat, clock.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	u := provider.User{ID: "pu_fuzz", ProviderID: providerA}
	f.Fuzz(func(t *testing.T, from, to, start, end string, weeks int, note, hours, price, postcodes, until string) {
		check := func(what string, err error) {
			t.Helper()
			var way *provider.BookingInTheWay
			if err != nil && !errors.Is(err, provider.ErrInvalid) && !errors.As(err, &way) {
				t.Fatalf("%s: %v, want a refusal", what, err)
			}
		}
		steps := []struct {
			name string
			run  func() error
		}{
			{"block", func() error {
				_, err := sup.AddBlock(ctx, u, provider.BlockInput{WholeDays: to != "", From: from, To: to, StartTime: start,
					EndTime: end, Weeks: weeks, Note: note})
				return err
			}},
			{"hours", func() error {
				return sup.PutHours(ctx, u, provider.HoursInput{Weekly: map[string][]string{"weekdays": strings.Split(hours, ",")},
					MinNoticeMinutes: weeks, HorizonDays: weeks})
			}},
			{"day", func() error {
				return sup.SetDay(ctx, u, provider.DayInput{Date: from, Ranges: strings.Split(hours, ",")})
			}},
			{"prices", func() error {
				return sup.PutPrices(ctx, u, []map[string]any{{"service_id": "vvs_install_faucet_standard", "price_sek": price}})
			}},
			{"postcodes", func() error {
				return sup.PutPostcodes(ctx, u, strings.FieldsFunc(postcodes, func(r rune) bool { return r == '\n' }))
			}},
			{"pause", func() error { return sup.Pause(ctx, u, until) }},
			{"remove", func() error { return sup.RemoveBlock(ctx, u, note) }},
		}
		for _, s := range steps {
			supplyRev, calRev, err := db.Revisions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			err = s.run()
			if s.name == "remove" && err != nil {
				continue // an unknown block is not found; nothing to remove
			}
			check(s.name, err)
			if err != nil {
				s2, c2, rerr := db.Revisions(ctx)
				if rerr != nil {
					t.Fatal(rerr)
				}
				if s2 != supplyRev || c2 != calRev {
					t.Fatalf("a refused %s moved the revisions: supply %d→%d, calendar %d→%d", s.name, supplyRev, s2, calRev, c2)
				}
			}
		}
	})
}
