// Command bokat runs and operates the Bokat booking service.
//
//	bokat serve [--demo] [flags]     run the HTTP API
//	bokat migrate                    apply database migrations
//	bokat partner create --name N --scopes LIST|all
//	bokat version
//
// Every flag has a BOKAT_* environment twin; see `bokat help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bokat:", err)
		os.Exit(exitCode(err))
	}
}
