// Command bokat-soak drives the reference deployment (deploy/soak-up.sh:
// nginx in front of two `bokat serve` instances on one PostgreSQL and one
// Redis) with a mixed load for a set time, restarts one instance mid-run
// (SIGTERM at a third of the run, SIGKILL at two thirds), and then checks
// and reports what an operator needs to trust the deployment:
//
//   - requests by operation and status, with the 5xx and failed connections
//     inside a restart window (from the signal until the instance answers
//     again, plus a few seconds) apart from any others;
//   - no provider double-booked (in the database);
//   - every booking answered 201 still there, active unless the soak
//     cancelled it;
//   - every outbox event of the soak's partner delivered at least once to
//     the steady webhook receiver, and how far the failing one (503 a third
//     of the time) got through its retries;
//   - webhook and notification lag p50/p99 (from the database);
//   - RSS and goroutines of each instance at start, middle and end (/proc
//     and its /metrics), and PostgreSQL connections (pg_stat_activity).
//
// The load: searches, confirmations, status reads, cancellations,
// reschedules, follow-up requests, MCP sessions (search and status through
// the MCP tools), and provider API calls with a provider token (bookings
// list, hours read and written back, blocks added and removed).
//
//	deploy/soak-up.sh STATE &          # in one terminal, or -up below
//	go run ./cmd/bokat-soak -state STATE -duration 30m
//	go run ./cmd/bokat-soak -up deploy/soak-up.sh -state STATE -duration 60s
//
// The exit status is 1 when a check fails.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

type config struct {
	state    string
	up       string
	duration time.Duration
	workers  int
	restart  string
	drain    time.Duration
	jsonOut  bool
	seed     uint64
	sample   time.Duration
}

func parseConfig(args []string) (config, error) {
	fs := flag.NewFlagSet("bokat-soak", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.state, "state", "", "state directory of deploy/soak-up.sh (soak.json, pid files)")
	fs.StringVar(&c.up, "up", "", "start the deployment with this script (deploy/soak-up.sh) into -state, and stop it at the end")
	fs.DurationVar(&c.duration, "duration", 60*time.Second, "how long to drive the load (30m for the reference figure)")
	fs.IntVar(&c.workers, "workers", 6, "concurrent clients")
	fs.StringVar(&c.restart, "restart", "a", "the instance to restart mid-run (a or b; none for no restart)")
	fs.DurationVar(&c.drain, "drain", 90*time.Second, "after the load, how long to wait for the steady receiver to get every event")
	fs.BoolVar(&c.jsonOut, "json", false, "print the report as JSON")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the load's choices")
	fs.DurationVar(&c.sample, "sample", 10*time.Second, "how often to sample each instance's memory and goroutines during the load")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.state == "" {
		return c, errors.New("-state is required")
	}
	if c.duration < 10*time.Second || c.workers < 1 || c.sample < time.Second {
		return c, errors.New("-duration must be at least 10s, -workers at least 1 and -sample at least 1s")
	}
	return c, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bokat-soak:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// deployment is what soak-up.sh writes to soak.json.
type deployment struct {
	BaseURL  string `json:"base_url"`
	Database string `json:"database"`
	Partner  struct {
		Token string `json:"token"`
		ID    string `json:"client_id"`
	} `json:"partner"`
	Provider struct {
		Token      string `json:"token"`
		ProviderID string `json:"provider_id"`
	} `json:"provider"`
	ProviderFeed string     `json:"provider_feed"`
	Instances    []instance `json:"instances"`
}

type instance struct {
	Name    string `json:"name"`
	Addr    string `json:"addr"`
	Metrics string `json:"metrics"`
	PIDFile string `json:"pid_file"`
	Log     string `json:"log"`
}

func run(ctx context.Context, args []string, out, logw io.Writer) (bool, error) {
	c, err := parseConfig(args)
	if err != nil {
		return false, err
	}
	if c.up != "" {
		stopUp, err := startDeployment(ctx, c.up, c.state, logw)
		if err != nil {
			return false, err
		}
		defer stopUp()
	}
	raw, err := os.ReadFile(filepath.Join(c.state, "soak.json"))
	if err != nil {
		return false, fmt.Errorf("the deployment's soak.json: %w (is deploy/soak-up.sh running?)", err)
	}
	var d deployment
	if err := json.Unmarshal(raw, &d); err != nil {
		return false, fmt.Errorf("soak.json: %w", err)
	}
	s, err := newSoak(ctx, c, d, logw)
	if err != nil {
		return false, err
	}
	defer s.close()
	rep, err := s.run(ctx)
	if err != nil {
		return false, err
	}
	if c.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return rep.OK, enc.Encode(rep)
	}
	rep.print(out)
	return rep.OK, nil
}

// startDeployment runs the start script into state and waits for its ready
// file; the returned function stops it (SIGTERM) and waits for it.
func startDeployment(ctx context.Context, script, state string, logw io.Writer) (func(), error) {
	_ = os.Remove(filepath.Join(state, "ready"))
	cmd := exec.Command(script, state)
	cmd.Stdout, cmd.Stderr = logw, logw
	cmd.Env = append(os.Environ(), "SOAK_DROP_DB="+os.Getenv("SOAK_DROP_DB"))
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	deadline := time.After(10 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(state, "ready")); err == nil {
			return stop, nil
		}
		select {
		case err := <-done:
			return nil, fmt.Errorf("%s exited before the deployment was ready: %v", script, err)
		case <-deadline:
			stop()
			return nil, fmt.Errorf("%s: not ready within 10 minutes", script)
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
