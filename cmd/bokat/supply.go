package main

import (
	"context"
	"errors"
	"fmt"
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
	data, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read the supply file: %w", err)
	}
	cat, err := catalog.Load()
	if err != nil {
		return fmt.Errorf("load the catalog: %w", err)
	}
	// Check the file before touching the database.
	providers, err := supply.Parse(name, data, cat)
	if err != nil {
		return reportSupplyProblems(err, e)
	}
	db, err := cal.open(ctx, sc, providers)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := supply.ImportParsed(ctx, sqlstore.Bind[supply.Tx](db), name, providers, e.now())
	if err != nil {
		return reportSupplyProblems(err, e)
	}
	fmt.Fprintf(e.stdout, "imported %s: %s\n", name, res)
	return cal.apply(ctx, db, providers, e)
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
