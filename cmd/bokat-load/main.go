// Command bokat-load measures booking option search under load through
// HTTP, against a baseline, with one load generator (vegeta) in one run.
//
// It starts two servers on 127.0.0.1, each in a process of its own (the
// tool starts itself again as the server, once another process of its own
// has imported the server's supply, as `bokat supply import` runs apart
// from `bokat serve`; -in-process keeps them in this process, beside the
// load generator, whose garbage collection then pauses them too):
//
//   - search: the real Bokat handler (contract validation, search, signing,
//     encoding) on a fresh SQLite store (or -database) loaded with the demo
//     supply;
//   - bare: a plain net/http handler that decodes the same request body and
//     answers a JSON body of the same size.
//
// For each it finds the maximum throughput with a fixed number of
// concurrent workers (closed loop), alternating between the two for
// -rounds rounds, then attacks search at a constant rate of half its
// measured maximum (open loop) and reports the p99 latency there. Targets:
// search reaches at least half the bare throughput, and its p99 at half load
// is under 10 ms. -check makes the exit status report whether both hold.
//
//	go run ./cmd/bokat-load
//
// With -large N it measures search at scale instead: a demo server (the
// demo supply) and a large server (a generated supply of N providers that
// all cover the searched postcode, 40 one-hour blocked periods each; see
// bokat supply generate), each on its own store (-database and
// -large-database; fresh SQLite files by default), alternating for -rounds
// rounds, then the large server at half its maximum rate. Targets: the large
// rate is at least half the demo rate, and its p99 at half load is under
// 10 ms. It also reports the peak resident memory of the large server's
// process from /proc.
//
//	go run ./cmd/bokat-load -large 5000 -workers 4
//
// Attacks last 15 s by default: at half load that is enough requests for a
// p99 that one scheduling hiccup does not decide (see docs/decisions.md,
// "Judging the p99").
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/httpapi"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
	"bokat/internal/webhook"
	"bokat/internal/wire"
)

// searchBody is the request both servers receive: a faucet installation in
// central Stockholm within two weeks (six options on the demo supply).
const searchBody = `{"spec_version":"public_bookings_api_v1","vertical_id":"vvs","job_type_id":"install_faucet",` +
	`"description":"Byta köksblandare, ny blandare finns på plats.",` +
	`"location":{"country_code":"SE","postcode":"113 45","city":"Stockholm"},` +
	`"timing":{"preferred_time_text":"inom två veckor"},"locale":"sv-SE"}`

func main() {
	if spec, ok := os.LookupEnv(serverEnv); ok {
		os.Exit(serveChild(spec, os.Stdin, os.Stdout))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bokat-load:", err)
		os.Exit(1)
	}
}

type config struct {
	duration time.Duration
	rounds   int
	workers  int
	database string
	check    bool
	jsonOut  bool
	profile  string
	heap     string
	rate     int
	// large is the number of providers of the large supply (scale mode).
	large         int
	largeDatabase string
	// inProcess runs the servers in this process instead of children.
	inProcess bool
	// calendars is the number of providers with a calendar feed each
	// (calendar mode), interval serve's sync interval there, bokat the
	// program to run (built when empty).
	calendars int
	interval  time.Duration
	bokat     string
}

// measurement is one attack's outcome.
type measurement struct {
	Server     string        `json:"server"`
	Mode       string        `json:"mode"`
	Rate       float64       `json:"target_rate,omitempty"`
	Throughput float64       `json:"throughput_rps"`
	P50        time.Duration `json:"p50_ns"`
	P90        time.Duration `json:"p90_ns"`
	P99        time.Duration `json:"p99_ns"`
	Max        time.Duration `json:"max_ns"`
	Success    float64       `json:"success_ratio"`
	Requests   uint64        `json:"requests"`
	// ServerCPU is the CPU time (user and system) the server's process
	// spent per request during the attack; zero for a server in this
	// process, whose CPU time the load generator shares.
	ServerCPU time.Duration `json:"server_cpu_per_request_ns,omitempty"`
}

type report struct {
	BodyBytes int           `json:"response_bytes"`
	Runs      []measurement `json:"runs"`
	SearchMax float64       `json:"search_max_rps"`
	BareMax   float64       `json:"bare_max_rps"`
	Ratio     float64       `json:"ratio"`
	// CPURatio is the bare server's CPU time per request over the search
	// server's, in the maximum-throughput attacks (0 without children).
	CPURatio       float64       `json:"cpu_ratio,omitempty"`
	HalfLoadP99    time.Duration `json:"half_load_p99_ns"`
	HalfLoadTarget float64       `json:"half_load_rps"`
	TargetsMet     bool          `json:"targets_met"`
}

// parseConfig reads the command line.
func parseConfig(args []string) (config, error) {
	fs := flag.NewFlagSet("bokat-load", flag.ContinueOnError)
	var c config
	fs.DurationVar(&c.duration, "duration", 15*time.Second, "length of each attack (at most 60s)")
	fs.IntVar(&c.rounds, "rounds", 2, "alternating maximum-throughput rounds per server")
	fs.IntVar(&c.workers, "workers", 32, "concurrent workers of the maximum-throughput attacks")
	fs.StringVar(&c.database, "database", "", "database URL for the search server (default: a fresh SQLite file)")
	fs.BoolVar(&c.check, "check", false, "exit with an error when a target is missed")
	fs.BoolVar(&c.jsonOut, "json", false, "print the report as JSON")
	fs.IntVar(&c.rate, "rate", 0, "only attack both servers at this constant rate (req/s) and report their latencies")
	fs.IntVar(&c.large, "large", 0, "scale mode: compare search over the demo supply with search over a generated supply of this many providers")
	fs.StringVar(&c.largeDatabase, "large-database", "", "scale mode: database URL of the large supply's server (default: a fresh SQLite file); -database is the demo server's")
	fs.StringVar(&c.profile, "cpuprofile", "", "write a CPU profile of the measured server (search, or the large server with -large) to this file; with -in-process, of the whole run")
	fs.StringVar(&c.heap, "memprofile", "", "write a heap profile of the measured server's process, taken after a garbage collection at the end of the run, to this file (not with -in-process)")
	fs.BoolVar(&c.inProcess, "in-process", false, "run the servers inside this process, beside the load generator, instead of in processes of their own")
	fs.IntVar(&c.calendars, "calendars", 0, "calendar mode: sync a generated calendar feed of 200 events for each of this many generated providers in bokat serve, and report CPU time, rows and peak RSS")
	fs.DurationVar(&c.interval, "interval", 5*time.Minute, "calendar mode: serve's --calendar-sync-interval (a round must fit in it)")
	fs.StringVar(&c.bokat, "bokat", "", "calendar mode: the bokat program to run (default: built from ./cmd/bokat)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.calendars < 0 || c.calendars > supply.MaxGenerateProviders || c.interval < time.Second {
		return c, errors.New("-calendars must be in 0..1000000 and -interval at least 1s")
	}
	if c.duration <= 0 || c.duration > time.Minute || c.rounds < 1 || c.rounds > 5 || c.workers < 1 {
		return c, errors.New("-duration must be in (0, 60s], -rounds in 1..5, -workers >= 1")
	}
	if c.large < 0 || c.large > supply.MaxGenerateProviders || (c.large > 0 && c.rate > 0) {
		return c, fmt.Errorf("-large must be in 0..%d, and not combined with -rate", supply.MaxGenerateProviders)
	}
	return c, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	c, err := parseConfig(args)
	if err != nil {
		return err
	}
	if c.heap != "" && c.inProcess {
		return errors.New("-memprofile needs the servers in processes of their own (not -in-process)")
	}
	if c.profile != "" && c.inProcess {
		f, err := os.Create(c.profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if c.large > 0 {
		return runScale(ctx, c, out)
	}
	if c.calendars > 0 {
		return runCalendars(ctx, c, out)
	}
	search, err := startServer(ctx, serverSpec{Kind: "search", Database: c.database, SupplyName: supply.DemoName,
		CPUProfile: absPath(c.profile, c.inProcess), HeapProfile: absPath(c.heap, c.inProcess)}, supply.Demo(), c.inProcess)
	if err != nil {
		return err
	}
	defer search.Close()
	bare, err := startServer(ctx, serverSpec{Kind: "bare", BodyBytes: search.BodyBytes}, nil, c.inProcess)
	if err != nil {
		return err
	}
	defer bare.Close()
	searchURL, bareURL := search.URL, bare.URL

	// Check that the bare body has the size of the real one.
	bareBody, err := post(bareURL)
	if err != nil {
		return err
	}
	if len(bareBody) != search.BodyBytes {
		return fmt.Errorf("bare body is %d bytes, search body %d", len(bareBody), search.BodyBytes)
	}

	rep := report{BodyBytes: search.BodyBytes}
	warm := min(time.Second, c.duration)
	if c.rate > 0 {
		attackRate(bareURL, "bare", float64(c.rate), warm)
		attackRate(searchURL, "search", float64(c.rate), warm)
		for _, srv := range []struct{ name, url string }{{"bare", bareURL}, {"search", searchURL}} {
			m := attackRate(srv.url, srv.name, float64(c.rate), c.duration)
			fmt.Fprintf(out, "%-7s constant %5d/s: p50 %s p90 %s p99 %s max %s success %.2f%%\n", m.Server, c.rate,
				m.P50.Round(10*time.Microsecond), m.P90.Round(10*time.Microsecond), m.P99.Round(10*time.Microsecond),
				m.Max.Round(10*time.Microsecond), m.Success*100)
		}
		return nil
	}
	cmp, err := compare(ctx, c, bare, "bare", search, "search")
	if err != nil {
		return err
	}
	rep.Runs, rep.BareMax, rep.SearchMax, rep.Ratio = cmp.runs, cmp.refMax, cmp.subjectMax, cmp.ratio
	rep.CPURatio = cmp.cpuRatio
	rep.HalfLoadTarget, rep.HalfLoadP99, rep.TargetsMet = cmp.halfTarget, cmp.halfP99, cmp.met

	return emit(out, c, rep, rep.TargetsMet, "ratio", func() { printReport(out, rep, c) })
}

// absPath is a profile path as the measured server's process is given it:
// absolute, and empty when the servers run in this process.
func absPath(path string, inProcess bool) string {
	if inProcess || path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// emit writes a report as JSON or as text and, with -check, fails when its
// targets were missed.
func emit(out io.Writer, c config, rep any, met bool, ratioName string, print func()) error {
	if c.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		print()
	}
	if c.check && !met {
		return errors.New("targets missed: want " + ratioName + " >= 0.50 and p99 < 10ms at half load")
	}
	return nil
}

// comparison is the outcome of compare.
type comparison struct {
	runs                      []measurement
	refMax, subjectMax, ratio float64
	// cpuRatio is the reference's server CPU time per request over the
	// subject's (0 when the servers run in this process).
	cpuRatio   float64
	halfTarget float64
	halfP99    time.Duration
	met        bool
}

// compare warms both servers, runs c.rounds alternating maximum-throughput
// attacks of the reference and the subject, then attacks the subject at
// half its mean maximum rate. The targets: the subject reaches at least half
// the reference's rate, and its p99 at half load is under 10 ms with every
// request answered.
//
// On a shared machine the rates swing with what else runs; the servers'
// CPU time per request (each in a process of its own) does much less, so
// the comparison also gives the ratio of those.
func compare(ctx context.Context, c config, ref *server, refName string, subject *server, subjectName string) (comparison, error) {
	warm := min(time.Second, c.duration)
	attackMax(subject, subjectName, c.workers, warm)
	attackMax(ref, refName, c.workers, warm)
	var cmp comparison
	var refSum, subjectSum float64
	var refCPU, subjectCPU time.Duration
	for round := 0; round < c.rounds; round++ {
		if ctx.Err() != nil {
			return cmp, ctx.Err()
		}
		r := attackMax(ref, refName, c.workers, c.duration)
		s := attackMax(subject, subjectName, c.workers, c.duration)
		cmp.runs = append(cmp.runs, r, s)
		refSum += r.Throughput
		subjectSum += s.Throughput
		refCPU += r.ServerCPU
		subjectCPU += s.ServerCPU
	}
	cmp.refMax, cmp.subjectMax = refSum/float64(c.rounds), subjectSum/float64(c.rounds)
	cmp.ratio = cmp.subjectMax / cmp.refMax
	if refCPU > 0 && subjectCPU > 0 {
		cmp.cpuRatio = float64(refCPU) / float64(subjectCPU)
	}
	cmp.halfTarget = cmp.subjectMax / 2
	half := attackRate(subject.URL, subjectName, cmp.halfTarget, c.duration)
	cmp.runs = append(cmp.runs, half)
	cmp.halfP99 = half.P99
	cmp.met = cmp.ratio >= 0.5 && cmp.halfP99 < 10*time.Millisecond && half.Success >= 0.999
	return cmp, nil
}

// printRuns prints the table of runs, rates with the given decimals.
func printRuns(w io.Writer, runs []measurement, decimals int) {
	fmt.Fprintf(w, "%-7s %-18s %10s %10s %10s %9s %9s\n", "server", "mode", "req/s", "p50", "p99", "success", "cpu/req")
	for _, m := range runs {
		mode := m.Mode
		if m.Rate > 0 {
			mode = fmt.Sprintf("%s %.*f/s", m.Mode, decimals+1, m.Rate)
		}
		cpu := "-"
		if m.ServerCPU > 0 {
			cpu = m.ServerCPU.Round(time.Microsecond).String()
		}
		fmt.Fprintf(w, "%-7s %-18s %10.*f %10s %10s %8.2f%% %9s\n", m.Server, mode, decimals, m.Throughput,
			m.P50.Round(10*time.Microsecond), m.P99.Round(10*time.Microsecond), m.Success*100, cpu)
	}
}

func printReport(w io.Writer, rep report, c config) {
	fmt.Fprintf(w, "response body %d bytes; %d workers; %s per attack\n\n", rep.BodyBytes, c.workers, c.duration)
	printRuns(w, rep.Runs, 0)
	verdict := "met"
	if !rep.TargetsMet {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "\nsearch %.0f req/s / bare %.0f req/s = ratio %.2f (target >= 0.50)\n", rep.SearchMax, rep.BareMax, rep.Ratio)
	if rep.CPURatio > 0 {
		fmt.Fprintf(w, "server CPU per request, bare / search = %.2f (load average %s)\n", rep.CPURatio, loadAvg())
	}
	fmt.Fprintf(w, "search p99 at %.0f req/s (half its maximum): %s (target < 10ms)\ntargets %s\n",
		rep.HalfLoadTarget, rep.HalfLoadP99.Round(10*time.Microsecond), verdict)
}

func target(url string) vegeta.Targeter {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return vegeta.NewStaticTargeter(vegeta.Target{Method: "POST", URL: url, Body: []byte(searchBody), Header: h})
}

func newAttacker(workers int) *vegeta.Attacker {
	return vegeta.NewAttacker(vegeta.Workers(uint64(workers)), vegeta.MaxWorkers(uint64(workers)),
		vegeta.KeepAlive(true), vegeta.Connections(workers), vegeta.MaxBody(0), vegeta.Timeout(10*time.Second))
}

// attackMax sends requests to srv as fast as the workers get answers.
func attackMax(srv *server, name string, workers int, d time.Duration) measurement {
	a := newAttacker(workers)
	cpu0, cpuOK := srv.CPU()
	m := collect(a.Attack(target(srv.URL), vegeta.Rate{Freq: 0}, d, name), name, "max", 0)
	if cpu1, ok := srv.CPU(); cpuOK && ok && m.Requests > 0 {
		m.ServerCPU = (cpu1 - cpu0) / time.Duration(m.Requests)
	}
	return m
}

// attackRate sends requests at a constant rate, whatever the answers take.
// A rate below 1/s is kept as one request per 1/rate seconds.
func attackRate(url, name string, rate float64, d time.Duration) measurement {
	a := vegeta.NewAttacker(vegeta.KeepAlive(true), vegeta.MaxBody(0), vegeta.Timeout(10*time.Second))
	pacer := vegeta.Rate{Freq: max(1, int(rate)), Per: time.Second}
	if rate < 1 {
		pacer = vegeta.Rate{Freq: 1, Per: time.Duration(float64(time.Second) / max(rate, 0.01))}
	}
	return collect(a.Attack(target(url), pacer, d, name), name, "constant", float64(pacer.Freq)*float64(time.Second)/float64(pacer.Per))
}

func collect(results <-chan *vegeta.Result, server, mode string, rate float64) measurement {
	var m vegeta.Metrics
	for r := range results {
		m.Add(r)
	}
	m.Close()
	return measurement{Server: server, Mode: mode, Rate: rate, Throughput: m.Throughput, P50: m.Latencies.P50,
		P90: m.Latencies.P90, P99: m.Latencies.P99, Max: m.Latencies.Max, Success: m.Success, Requests: m.Requests}
}

func post(url string) ([]byte, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(searchBody))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %d: %s", url, resp.StatusCode, body)
	}
	return body, nil
}

// listen opens a fresh 127.0.0.1 port.
func listen() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String(), nil
}

// serve runs h on ln with the settings of bokat serve.
func serve(ln net.Listener, h http.Handler, log *slog.Logger) func() {
	srv := wire.NewHTTPServer(h, log)
	go srv.Serve(ln)
	return func() { srv.Close() }
}

// startSearchServer serves the real handler on a store, first loaded with
// the supply file by importSupply unless it is nil (then the store has been
// loaded already), and returns the search URL and one response body.
func startSearchServer(ctx context.Context, database, supplyName string, supplyFile []byte) (string, []byte, func(), error) {
	dir, err := os.MkdirTemp("", "bokat-load-")
	if err != nil {
		return "", nil, nil, err
	}
	cleanup := []func(){func() { os.RemoveAll(dir) }}
	done := func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}
	fail := func(err error) (string, []byte, func(), error) { done(); return "", nil, nil, err }
	if database == "" {
		database = "sqlite:" + filepath.Join(dir, "bokat.db")
	}
	if supplyFile != nil {
		if err := importSupply(ctx, database, supplyName, supplyFile); err != nil {
			return fail(err)
		}
	}
	b, err := openBase(ctx, database)
	if err != nil {
		return fail(err)
	}
	cleanup = append(cleanup, func() { b.Store.Close() })
	ln, url, err := listen()
	if err != nil {
		return fail(err)
	}
	cleanup = append(cleanup, func() { ln.Close() })
	srv, err := newSearchHandler(b, url)
	if err != nil {
		return fail(err)
	}
	cleanup = append(cleanup, serve(ln, srv.Handler(), b.Log))
	url += "/v1/booking-options"
	body, err := post(url)
	if err != nil {
		return fail(err)
	}
	var probe struct {
		Options []json.RawMessage `json:"options"`
	}
	if err := json.Unmarshal(body, &probe); err != nil || len(probe.Options) == 0 {
		return fail(fmt.Errorf("the search returned no options: %s", body))
	}
	return url, body, done, nil
}

// importSupply migrates the store at database and imports the supply file
// into it, as `bokat supply import` does.
func importSupply(ctx context.Context, database, supplyName string, file []byte) error {
	db, err := wire.OpenStore(ctx, database)
	if err != nil {
		return err
	}
	defer db.Close()
	cat, err := catalog.Load()
	if err != nil {
		return err
	}
	_, err = supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat, supplyName, file, time.Now())
	return err
}

// openBase opens the store at database, sealed with fresh random keys, and
// loads the definitions: what serve's wiring builds on.
func openBase(ctx context.Context, database string) (wire.Base, error) {
	hasher, err := auth.NewHasher([]byte(rand.Text() + rand.Text()))
	if err != nil {
		return wire.Base{}, err
	}
	sealKey := make([]byte, webhook.KeySize)
	rand.Read(sealKey)
	sealer, err := webhook.NewKeyring(sealKey)
	if err != nil {
		return wire.Base{}, err
	}
	options, err := booking.NewKeyring(booking.Key{ID: "load", Secret: []byte(rand.Text() + rand.Text())})
	if err != nil {
		return wire.Base{}, err
	}
	keys := wire.Keys{Hasher: hasher, Sealing: sealer, Options: options}
	contract, cat, err := wire.Definitions()
	if err != nil {
		return wire.Base{}, err
	}
	db, err := wire.OpenStore(ctx, database, keys.Vault())
	if err != nil {
		return wire.Base{}, err
	}
	// The access log is formatted as in production, then discarded.
	log := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return wire.Base{Log: log, Now: time.Now, Store: db, Keys: keys, Contract: contract, Catalog: cat}, nil
}

// newSearchHandler returns the API as serve wires it, on b, with rate
// limits off (the load is what is measured) and no background workers.
func newSearchHandler(b wire.Base, url string) (*httpapi.Server, error) {
	o := wire.Options{BaseURL: url, RateLimits: &httpapi.RateLimits{}}
	var uc wire.UseCases
	if err := uc.Build(b, o); err != nil {
		return nil, err
	}
	var ops wire.Ops
	ops.Complete(b.Log, b.Store, b.Now)
	return wire.API(b, o, &uc, ops)
}

// startBareServer serves a handler that decodes the request and answers a
// JSON body of exactly size bytes.
func startBareServer(size int) (string, func(), error) {
	type answer struct {
		OK      bool   `json:"ok"`
		Padding string `json:"padding"`
	}
	empty, _ := json.Marshal(answer{OK: true})
	padding := strings.Repeat("x", size-len(empty)-1) // json.Encoder adds a newline
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(answer{OK: true, Padding: padding}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(buf.Bytes())
	})
	ln, url, err := listen()
	if err != nil {
		return "", nil, err
	}
	return url + "/bare", serve(ln, h, slog.New(slog.DiscardHandler)), nil
}
