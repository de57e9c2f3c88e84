package main

import (
	"bufio"
	"bytes"
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
	"syscall"
	"time"
)

// The servers under load run in processes of their own, as a deployed
// server does: the load generator's garbage collection then never pauses a
// server, and a server's memory is its own. The tool starts itself again
// with serverEnv set to a serverSpec; that child starts the server, writes
// one serverReady line to its stdout and serves until its stdin closes.
// A search server's supply is imported before, by a child of its own (as
// `bokat supply import` runs apart from `bokat serve`), so the server's
// process holds what serve holds and not the garbage of a large import.
const serverEnv = "BOKAT_LOAD_SERVER"

// serverSpec is what a child serves.
type serverSpec struct {
	// Kind is "search" (the real handler on a store, loaded with
	// SupplyFile when set), "bare", or "import" (import SupplyFile into
	// Database, report, exit).
	Kind       string `json:"kind"`
	Database   string `json:"database,omitempty"`
	SupplyName string `json:"supply_name,omitempty"`
	SupplyFile string `json:"supply_file,omitempty"`
	// Body is the search request a search server is probed with, and
	// then searched with (empty: searchBody).
	Body string `json:"body,omitempty"`
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
	// Warmup is how long a search server took to build its search index.
	Warmup time.Duration `json:"warmup_ns,omitempty"`
	Err    string        `json:"error,omitempty"`
}

// server is a running server, in this process or a child.
type server struct {
	URL       string
	BodyBytes int
	// Body is the search request the load sends (nil: searchBody).
	Body []byte
	// Warmup is how long a search server took to build its search index;
	// ImportTime, ImportCPU and ImportPeakRSS are the wall time, CPU time
	// and peak resident memory of the process that imported its supply
	// (zero for a server in this process).
	Warmup        time.Duration
	ImportTime    time.Duration
	ImportCPU     time.Duration
	ImportPeakRSS int64
	cmd           *exec.Cmd
	stdin         io.Closer
	close         func()
	// dir, when set, is removed once the server has stopped.
	dir string
}

// body is the search request the load sends to s.
func (s *server) body() []byte {
	if s.Body != nil {
		return s.Body
	}
	return []byte(searchBody)
}

// PeakRSS is the server's peak resident set size: the child's, or this
// process's for a server in this process.
func (s *server) PeakRSS() (int64, error) {
	if s.cmd == nil {
		return peakRSS("/proc/self/status")
	}
	return peakRSS(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
}

// CPU returns the CPU time the server's child process has used; false for
// a server in this process.
func (s *server) CPU() (time.Duration, bool) {
	if s.cmd == nil {
		return 0, false
	}
	cpu, err := procCPU(s.cmd.Process.Pid)
	return cpu, err == nil
}

// Close stops the server and, for a child, waits for it to exit.
func (s *server) Close() error {
	if s.cmd == nil {
		s.close()
		return nil
	}
	if s.dir != "" {
		defer os.RemoveAll(s.dir)
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
// server; when it is nil, spec.SupplyFile (a file's path) is, if set.
func startServer(ctx context.Context, spec serverSpec, supplyFile []byte, inProcess bool) (*server, error) {
	var body []byte
	if spec.Body != "" {
		body = []byte(spec.Body)
	}
	if inProcess {
		switch spec.Kind {
		case "bare":
			url, closeBare, err := startBareServer(spec.BodyBytes)
			if err != nil {
				return nil, err
			}
			return &server{URL: url, BodyBytes: spec.BodyBytes, close: closeBare}, nil
		default:
			var open opener
			switch {
			case supplyFile != nil:
				open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(supplyFile)), nil }
			case spec.SupplyFile != "":
				open = func() (io.ReadCloser, error) { return os.Open(spec.SupplyFile) }
			}
			s := &server{Body: body}
			var answer []byte
			var err error
			s.URL, answer, s.Warmup, s.close, err = startSearchServer(ctx, spec.Database, spec.SupplyName, open, s.body())
			if err != nil {
				return nil, err
			}
			s.BodyBytes = len(answer)
			return s, nil
		}
	}
	if spec.Kind != "search" {
		s, err := spawn(spec)
		if err != nil {
			return nil, fmt.Errorf("%s server process: %w", spec.Kind, err)
		}
		return s, nil
	}
	// The store (a fresh SQLite file unless Database names one) and the
	// supply file live in dir until the server stops.
	dir, err := os.MkdirTemp("", "bokat-load-")
	if err != nil {
		return nil, err
	}
	if spec.Database == "" {
		spec.Database = "sqlite:" + filepath.Join(dir, "bokat.db")
	}
	imp := serverSpec{Kind: "import", Database: spec.Database, SupplyName: spec.SupplyName, SupplyFile: spec.SupplyFile}
	if supplyFile != nil || imp.SupplyFile == "" {
		imp.SupplyFile = filepath.Join(dir, "supply.yaml")
		if err := os.WriteFile(imp.SupplyFile, supplyFile, 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	started := time.Now()
	importer, err := spawn(imp)
	if err == nil {
		err = importer.Close()
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("search server process: importing its supply: %w", err)
	}
	importTime, importRSS := time.Since(started), maxRSS(importer.cmd.ProcessState)
	importCPU := cpuTime(importer.cmd.ProcessState)
	// The server's store holds the supply now: it imports nothing.
	spec.SupplyFile = ""
	s, err := spawn(spec)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("search server process: %w", err)
	}
	s.dir, s.Body, s.ImportTime, s.ImportCPU, s.ImportPeakRSS = dir, body, importTime, importCPU, importRSS
	return s, nil
}

// cpuTime is the CPU time (user and system) an exited process used.
func cpuTime(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}

// maxRSS is the peak resident set size of an exited process, or 0 where
// the system does not report it.
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss) << 10 // kB on Linux
	}
	return 0
}

// spawn starts a child process for spec and reads its ready line; the
// error is the child's when it reports one.
func spawn(spec serverSpec) (*server, error) {
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
		return nil, err
	}
	s.URL, s.BodyBytes, s.Warmup = ready.URL, ready.BodyBytes, ready.Warmup
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
	if spec.Kind == "import" {
		open := func() (io.ReadCloser, error) { return os.Open(spec.SupplyFile) }
		if err := importSupply(context.Background(), spec.Database, spec.SupplyName, open); err != nil {
			return fail(err)
		}
		ready(serverReady{})
		return 0
	}
	s, err := startServer(context.Background(), spec, nil, true)
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	ready(serverReady{URL: s.URL, BodyBytes: s.BodyBytes, Warmup: s.Warmup})
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
