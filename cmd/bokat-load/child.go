package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"
)

// The servers under load run in processes of their own, as a deployed
// server does: the load generator's garbage collection then never pauses a
// server, and a server's memory is its own. The tool starts itself again
// with serverEnv set to a serverSpec; that child starts the server, writes
// one serverReady line to its stdout and serves until its stdin closes.
const serverEnv = "BOKAT_LOAD_SERVER"

// serverSpec is what a child serves.
type serverSpec struct {
	// Kind is "search" (the real handler on a store loaded with SupplyFile)
	// or "bare".
	Kind       string `json:"kind"`
	Database   string `json:"database,omitempty"`
	SupplyName string `json:"supply_name,omitempty"`
	SupplyFile string `json:"supply_file,omitempty"`
	// BodyBytes is the size of the bare server's answers.
	BodyBytes int `json:"body_bytes,omitempty"`
	// CPUProfile, when set, is where the child writes its CPU profile.
	CPUProfile string `json:"cpu_profile,omitempty"`
	// HeapProfile, when set, is where the child writes a heap profile when
	// it is told to stop, after a garbage collection: what it holds live.
	HeapProfile string `json:"heap_profile,omitempty"`
}

// serverReady is the child's first line of output.
type serverReady struct {
	URL       string `json:"url,omitempty"`
	BodyBytes int    `json:"body_bytes,omitempty"`
	Err       string `json:"error,omitempty"`
}

// server is a running server, in this process or a child.
type server struct {
	URL       string
	BodyBytes int
	cmd       *exec.Cmd
	stdin     io.Closer
	close     func()
}

// PeakRSS is the server's peak resident set size: the child's, or this
// process's for a server in this process.
func (s *server) PeakRSS() (int64, error) {
	if s.cmd == nil {
		return peakRSS("/proc/self/status")
	}
	return peakRSS(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
}

// Close stops the server and, for a child, waits for it to exit.
func (s *server) Close() error {
	if s.cmd == nil {
		s.close()
		return nil
	}
	s.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		return fmt.Errorf("server process %d did not stop within 10s; killed", s.cmd.Process.Pid)
	}
}

// startServer starts the server of spec in a child process, or in this
// process when inProcess is set. supplyFile is the supply of a search
// server.
func startServer(ctx context.Context, spec serverSpec, supplyFile []byte, inProcess bool) (*server, error) {
	if inProcess {
		switch spec.Kind {
		case "bare":
			url, closeBare, err := startBareServer(spec.BodyBytes)
			if err != nil {
				return nil, err
			}
			return &server{URL: url, BodyBytes: spec.BodyBytes, close: closeBare}, nil
		default:
			url, body, closeSearch, err := startSearchServer(ctx, spec.Database, spec.SupplyName, supplyFile)
			if err != nil {
				return nil, err
			}
			return &server{URL: url, BodyBytes: len(body), close: closeSearch}, nil
		}
	}
	if spec.Kind == "search" {
		dir, err := os.MkdirTemp("", "bokat-load-supply-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir) // the child has read it once it is ready
		spec.SupplyFile = filepath.Join(dir, "supply.yaml")
		if err := os.WriteFile(spec.SupplyFile, supplyFile, 0o600); err != nil {
			return nil, err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), serverEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stdin: stdin}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	var ready serverReady
	if err == nil {
		err = json.Unmarshal(line, &ready)
	}
	if err == nil && ready.Err != "" {
		err = errors.New(ready.Err)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s server process: %w", spec.Kind, err)
	}
	s.URL, s.BodyBytes = ready.URL, ready.BodyBytes
	return s, nil
}

// serveChild is the whole life of a child server process, with its spec
// in rawSpec; it returns the exit status.
func serveChild(rawSpec string, stdin io.Reader, stdout io.Writer) int {
	ready := func(r serverReady) {
		raw, _ := json.Marshal(r)
		fmt.Fprintf(stdout, "%s\n", raw)
	}
	fail := func(err error) int { ready(serverReady{Err: err.Error()}); return 1 }
	var spec serverSpec
	if err := json.Unmarshal([]byte(rawSpec), &spec); err != nil {
		return fail(fmt.Errorf("%s: %w", serverEnv, err))
	}
	if spec.CPUProfile != "" {
		f, err := os.Create(spec.CPUProfile)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	var file []byte
	if spec.Kind == "search" {
		var err error
		if file, err = os.ReadFile(spec.SupplyFile); err != nil {
			return fail(err)
		}
	}
	s, err := startServer(context.Background(), spec, file, true)
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	ready(serverReady{URL: s.URL, BodyBytes: s.BodyBytes})
	// Serve until the parent closes stdin (or dies).
	io.Copy(io.Discard, stdin)
	if spec.HeapProfile != "" {
		f, err := os.Create(spec.HeapProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}
