package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"bokat/internal/catalog"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
)

// runSupplyImport imports a supply file (docs/supply-format.md). Every
// problem of the file is printed to stderr as "<file>:<line>:<column>:
// <field>: <message>", and nothing is written when there is any.
func runSupplyImport(ctx context.Context, args []string, e env) error {
	sc := newStoreCommand("supply import", e)
	cal := registerCalendarSettings(sc.fs)
	positional, err := sc.parse(args, func(positional []string) error {
		if len(positional) != 1 {
			return fmt.Errorf("%w: bokat supply import FILE", errUsage)
		}
		return nil
	})
	if err != nil {
		return err
	}
	name := positional[0]
	defer importGC()()
	cat, err := catalog.Load()
	if err != nil {
		return fmt.Errorf("load the catalog: %w", err)
	}
	db, err := sc.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	// The file is read once, checked and stored as it is read; a file with
	// any problem, or naming calendars this command cannot take (ready), is
	// rolled back.
	file, res, err := supply.ImportStream(ctx, sqlstore.Bind[supply.Tx](db), cat, name, func() (io.ReadCloser, error) { return os.Open(name) },
		e.now(), func(f *supply.File) error { return cal.ready(sc, f.Calendars) })
	if err != nil {
		return reportSupplyProblems(err, e)
	}
	fmt.Fprintf(e.stdout, "imported %s: %s\n", name, res)
	return cal.apply(ctx, sc, db, file.Calendars, e)
}

// Garbage collection of an import. Its live data is small — the providers
// read ahead and one batch being written — but it allocates a lot reading
// YAML, so collecting at twice the default growth saves a tenth of its CPU
// time; the soft limit keeps its memory well under 500 MB all the same.
// GOGC and GOMEMLIMIT, when set, are taken as given. importGC sets them
// for the import and returns the function that sets them back.
const (
	importGCPercent   = 200
	importMemoryLimit = 400 << 20
)

func importGC() (restore func()) {
	percent, limit := -2, int64(-1)
	if os.Getenv("GOGC") == "" {
		percent = debug.SetGCPercent(importGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		limit = debug.SetMemoryLimit(importMemoryLimit)
	}
	return func() {
		if percent != -2 {
			debug.SetGCPercent(percent)
		}
		if limit >= 0 {
			debug.SetMemoryLimit(limit)
		}
	}
}

func reportSupplyProblems(err error, e env) error {
	var perr *supply.Errors
	if !errors.As(err, &perr) {
		return err
	}
	for _, p := range perr.Problems {
		fmt.Fprintln(e.stderr, perr.Line(p))
	}
	return fmt.Errorf("%s has %d problem(s); nothing was imported", perr.File, len(perr.Problems))
}
