package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/supply"
)

// runSupplyGenerate writes a generated supply file (a development tool for
// tests and benchmarks): see supply.Generate. The same flags give the same
// bytes; --from defaults to today in Stockholm, so pass it to reproduce a
// file on another day.
func runSupplyGenerate(_ context.Context, args []string, e env) error {
	fs := newFlagSet("supply generate", e)
	var (
		o                             supply.GenerateOptions
		postcodes, services, from, to string
	)
	fs.IntVar(&o.Providers, "providers", 100, "number of providers")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the generator; the same seed gives the same file")
	fs.String(&postcodes, "postcodes", "", strings.Join(supply.DefaultGeneratePostcodes, ","), "comma-separated postcode entries every provider covers")
	fs.String(&services, "services", "", "", "comma-separated service ids every provider offers (default: every seeded service of the catalog)")
	fs.Bool(&o.National, "national", "", false, "spread the providers over the whole Swedish postcode range, each covering the areas around its home (dense cities, sparse north); excludes --postcodes")
	fs.IntVar(&o.BusyHours, "busy-hours", 40, "one-hour blocked periods per provider, inside its working hours")
	fs.IntVar(&o.Days, "days", 14, "days from --from over which the blocked periods are spread")
	fs.String(&from, "from", "", "", "first day of the blocked periods, YYYY-MM-DD (default: today in Stockholm)")
	fs.String(&to, "out", "", "-", "file to write, or - for standard output")
	fs.String(&o.CalendarURL, "calendar-url", "", "", "subscribe each provider to the calendar at this address, {id} replaced by the provider's id")
	positional, err := fs.parse(args)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(positional) != 0 {
		return fmt.Errorf("%w: bokat supply generate [--providers N] [--seed S] [--out FILE] takes no arguments", errUsage)
	}
	if o.Days < 1 {
		return fmt.Errorf("%w: --days must be at least 1", errUsage)
	}
	o.Postcodes = splitList(postcodes)
	if o.National && fs.isSet("postcodes") {
		return fmt.Errorf("%w: --national draws each provider's postcodes; give no --postcodes", errUsage)
	}
	if o.National {
		o.Postcodes = nil
	}
	o.Services = splitList(services)
	o.From = schedule.DateOf(e.now())
	if from != "" {
		t, err := time.Parse("2006-01-02", from)
		if err != nil {
			return fmt.Errorf("%w: --from must be a date YYYY-MM-DD", errUsage)
		}
		o.From = schedule.NewDate(t.Year(), t.Month(), t.Day())
	}
	cat, err := catalog.Load()
	if err != nil {
		return fmt.Errorf("load the catalog: %w", err)
	}
	if to == "-" {
		if err := supply.Generate(e.stdout, cat, o); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return nil
	}
	f, err := os.Create(to)
	if err != nil {
		return fmt.Errorf("create the supply file: %w", err)
	}
	if err := supply.Generate(f, cat, o); err != nil {
		f.Close()
		os.Remove(to)
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the supply file: %w", err)
	}
	fmt.Fprintf(e.stdout, "wrote %s: %d providers\n", to, o.Providers)
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
