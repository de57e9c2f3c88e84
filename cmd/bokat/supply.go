package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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
	cat, err := catalog.Load()
	if err != nil {
		return fmt.Errorf("load the catalog: %w", err)
	}
	// Check the file before touching the database; it is read again,
	// provider by provider, as it is imported.
	file, err := supply.Check(name, func() (io.ReadCloser, error) { return os.Open(name) }, cat)
	if err != nil {
		return reportSupplyProblems(err, e)
	}
	db, err := cal.open(ctx, sc, file.Calendars)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := supply.ImportFile(ctx, sqlstore.Bind[supply.Tx](db), file, e.now())
	if err != nil {
		return reportSupplyProblems(err, e)
	}
	fmt.Fprintf(e.stdout, "imported %s: %s\n", name, res)
	return cal.subscribe(ctx, db, file.Calendars, e)
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
