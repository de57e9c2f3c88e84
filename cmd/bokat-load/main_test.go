package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"bokat/internal/supply"
)

// TestMain lets the test binary be a server process of the tool, as the
// tool's own binary is.
func TestMain(m *testing.M) {
	if spec, ok := os.LookupEnv(serverEnv); ok {
		os.Exit(serveChild(spec, os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// TestServersRunInProcessesOfTheirOwn starts a search server as the tool
// does: it answers from another process, its peak memory is that
// process's, and Close ends the process.
func TestServersRunInProcessesOfTheirOwn(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a server process")
	}
	s, err := startServer(context.Background(), serverSpec{Kind: "search", SupplyName: supply.DemoName}, supply.Demo(), false)
	if err != nil {
		t.Fatal(err)
	}
	if s.cmd == nil || s.cmd.Process.Pid == os.Getpid() {
		t.Fatal("the server runs in this process")
	}
	body, err := post(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The answer carries times and signatures, so two searches can differ
	// by a few bytes.
	if d := len(body) - s.BodyBytes; d < -64 || d > 64 || s.BodyBytes < 10_000 {
		t.Errorf("body %d bytes, reported %d", len(body), s.BodyBytes)
	}
	own, err := peakRSS("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.PeakRSS()
	if err != nil || child < 1<<20 || child == own {
		t.Errorf("server peak RSS %d (%v), this process %d", child, err, own)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if !s.cmd.ProcessState.Exited() || s.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("server process state after Close: %v", s.cmd.ProcessState)
	}
	if _, err := post(s.URL); err == nil {
		t.Error("the server still answers after Close")
	}
}

// TestServerProcessReportsAFailedStart: a child that cannot start its
// server says why, and the tool returns that error.
func TestServerProcessReportsAFailedStart(t *testing.T) {
	t.Parallel()
	_, err := startServer(context.Background(), serverSpec{Kind: "search", Database: "nosuchengine://x",
		SupplyName: supply.DemoName}, supply.Demo(), false)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("search server process")) {
		t.Fatalf("err = %v, want the child's start failure", err)
	}
}

// TestLoadToolRuns runs the tool for a moment: both servers answer, the
// bodies have the same size, and the report carries every figure. It checks
// no speed target (those are judged on an idle machine).
func TestLoadToolRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts two servers and generates load")
	}
	var out bytes.Buffer
	// In this process, so that mode stays covered; scale mode below uses
	// server processes.
	if err := run(context.Background(), []string{"-in-process", "-duration", "150ms", "-rounds", "1", "-workers", "4", "-json"}, &out); err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out.String())
	}
	if rep.BodyBytes < 10_000 || len(rep.Runs) != 3 || rep.BareMax <= 0 || rep.SearchMax <= 0 || rep.Ratio <= 0 ||
		rep.HalfLoadP99 <= 0 || rep.HalfLoadP99 > 30*time.Second {
		t.Errorf("report = %+v", rep)
	}
	for _, m := range rep.Runs {
		if m.Success != 1 || m.Requests == 0 {
			t.Errorf("run %+v had failures", m)
		}
	}
}

// TestLoadToolScaleModeRuns runs scale mode on a small generated supply:
// both servers answer and the report carries every figure.
func TestLoadToolScaleModeRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts two servers, imports a generated supply and generates load")
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"-large", "60", "-duration", "150ms", "-rounds", "1", "-workers", "2", "-json"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	var rep scaleReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out.String())
	}
	if rep.Providers != 60 || len(rep.Runs) != 3 || rep.DemoMax <= 0 || rep.LargeMax <= 0 || rep.Ratio <= 0 ||
		rep.HalfLoadP99 <= 0 || rep.ImportSeconds <= 0 || rep.PeakRSSBytes < 1<<20 {
		t.Errorf("report = %+v", rep)
	}
	for i, want := range []string{"demo", "large", "large"} {
		if m := rep.Runs[i]; m.Server != want || m.Success != 1 || m.Requests == 0 {
			t.Errorf("run %d = %+v, want a successful %s run", i, m, want)
		}
	}
	if err := run(context.Background(), []string{"-large", "10", "-rate", "5"}, &out); err == nil {
		t.Error("-large with -rate was accepted")
	}
}
