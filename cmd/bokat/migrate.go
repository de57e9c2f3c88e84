package main

import (
	"context"
	"fmt"
)

func runMigrate(ctx context.Context, args []string, e env) error {
	sc := newStoreCommand("migrate", e)
	if _, err := sc.parse(args, nil); err != nil {
		return err
	}
	db, err := sc.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	current, _, err := db.SchemaVersions(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "database schema at version %d (%s)\n", current, db.Engine())
	return nil
}
