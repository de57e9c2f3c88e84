package main

import (
	"context"
	"fmt"
)

func runMigrate(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("migrate", e)
	var c commonConfig
	c.register(fs)
	if _, err := fs.parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := c.validate(); err != nil {
		return err
	}
	db, err := openStore(ctx, c)
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
