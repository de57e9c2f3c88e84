package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"bokat/internal/clocktest"
	"bokat/internal/logtest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// runMainEnv makes the test binary run the real program instead of the
// tests, so a test can start `bokat serve` as a process of its own and kill it.
const runMainEnv = "BOKAT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// manyProviders is a supply of n plumbers in Stockholm, each installing
// faucets in one hour, Monday–Friday 08:00–17:00.
func manyProviders(n int) string {
	var b strings.Builder
	b.WriteString("version: 1\nproviders:\n")
	for i := range n {
		fmt.Fprintf(&b, `  - id: prv_load_%03d
    name: Rör %03d AB
    email: bokningar@ror-%03d.example
    city: Stockholm
    min_notice_minutes: 0
    horizon_days: 30
    postcodes: ["111-118"]
    hours: {weekdays: ["08:00-17:00"]}
    services:
      - {service_id: vvs_install_faucet_standard, price_sek: %d, duration: {fixed_minutes: 60}}
`, i, i, i, 1500+i)
	}
	return b.String()
}

// prepareStore migrates the database, imports the supply and creates a
// partner with every scope, through the CLI; it returns the partner token.
func prepareStore(t *testing.T, dbURL, supplyFile string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "supply.yaml")
	if err := os.WriteFile(file, []byte(supplyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"supply", "import", file, "--database", dbURL}, getenvFrom(nil), &out, &errOut); err != nil {
		t.Fatalf("supply import: %v\n%s", err, errOut.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"partner", "create", "--name", "crash", "--scopes", "all", "--database", dbURL},
		getenvFrom(nil), &out, &errOut); err != nil {
		t.Fatalf("partner create: %v", err)
	}
	var p struct{ Token string }
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p.Token
}

// process is `bokat serve` running as a child process.
type process struct {
	cmd     *exec.Cmd
	baseURL string
	logs    *logtest.Buffer
	done    chan error
}

func startProcess(t *testing.T, dbURL string, extra ...string) *process {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database", dbURL, "--log-level", "info"}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	// The load of this test is far above the default per-principal quotas,
	// and whatever the server writes (e-mail in development) goes to a
	// folder of the test.
	dir := t.TempDir()
	cmd.Dir = dir
	cmd.Env = []string{runMainEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"BOKAT_RATE_SEARCH=off", "BOKAT_RATE_WRITES=off", "BOKAT_RATE_READS=off", "BOKAT_MAIL_DIR=" + filepath.Join(dir, "mail")}
	p := &process{cmd: cmd, logs: &logtest.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	lines := bufio.NewScanner(stdout)
	ready := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), "bokat listening on "); ok {
				ready <- strings.Fields(rest)[0]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case p.baseURL = <-ready:
	case err := <-p.done:
		t.Fatalf("serve exited: %v\n%s", err, p.logs.String())
	case <-clocktest.Patience(t).Done():
		t.Fatalf("serve did not start before the test binary's deadline\n%s", p.logs.String())
	}
	return p
}

// call sends a JSON request and returns the status and decoded body.
func call(client *http.Client, method, url, token string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, out, nil
}

var crashSearch = map[string]any{
	"vertical_id": "vvs", "job_type_id": "install_faucet", "description": "Byta köksblandare, ny finns på plats.",
	"location": map[string]any{"country_code": "SE", "postcode": "113 45"},
	"timing":   map[string]any{"preferred_time_text": "inom två veckor"},
}

func crashConfirm(option map[string]any, key string) map[string]any {
	return map[string]any{
		"booking_option_id":         option["booking_option_id"],
		"customer":                  map[string]any{"name": "Greta Gåsfot", "phone": "+46701234567", "email": "greta.gasfot@example.se"},
		"service_location":          map[string]any{"country_code": "SE", "address": "Drottninggatan 1", "postcode": "113 45"},
		"user_consent_confirmed":    true,
		"booking_terms_accepted":    true,
		"booking_terms_version":     option["terms"].(map[string]any)["version"],
		"booking_terms_accepted_at": time.Now().Format(time.RFC3339),
		"idempotency_key":           key,
	}
}

// TestConfirmationsSurviveSIGKILL kills the server with SIGKILL while
// confirmations are in flight, restarts it on the same database, and checks
// that every confirmation a client was told about (201) is there with its
// outbox event and notification jobs, that nothing is half-written, and that
// no provider is double-booked.
func TestConfirmationsSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			dbURL := sqlstoretest.URL(t, engine)
			token := prepareStore(t, dbURL, manyProviders(12))
			srv := startProcess(t, dbURL)
			client := &http.Client{Timeout: time.Minute}

			type attempt struct {
				key    string
				body   map[string]any
				status int
				id     string
			}
			var (
				mu       sync.Mutex
				attempts []attempt
				created  atomic.Int32
				stop     atomic.Bool
				wg       sync.WaitGroup
			)
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 7))
					for i := 0; !stop.Load(); i++ {
						status, res, err := call(client, "POST", srv.baseURL+"/v1/booking-options", "", crashSearch)
						if err != nil || status != 200 {
							time.Sleep(10 * time.Millisecond)
							continue
						}
						opts, _ := res["options"].([]any)
						if len(opts) == 0 {
							continue
						}
						o := opts[rng.IntN(len(opts))].(map[string]any)
						a := attempt{key: fmt.Sprintf("crash-%d-%d", w, i), body: crashConfirm(o, fmt.Sprintf("crash-%d-%d", w, i))}
						status, res, err = call(client, "POST", srv.baseURL+"/v1/bookings", token, a.body)
						if err == nil {
							a.status = status
							if status == 201 {
								a.id = res["booking"].(map[string]any)["id"].(string)
								created.Add(1)
							}
						}
						mu.Lock()
						attempts = append(attempts, a)
						mu.Unlock()
					}
				}()
			}
			clocktest.Wait(t, "25 bookings before the crash", func() bool { return created.Load() >= 25 })
			if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-srv.done
			stop.Store(true)
			wg.Wait()
			if created.Load() < 25 {
				t.Fatalf("only %d confirmations before the deadline", created.Load())
			}

			again := startProcess(t, dbURL)
			var confirmed []string
			unknown, replayed := 0, 0
			for _, a := range attempts {
				switch {
				case a.status == 201:
					confirmed = append(confirmed, a.id)
					status, res, err := call(client, "GET", again.baseURL+"/v1/bookings/"+a.id, token, nil)
					if err != nil || status != 200 || res["found"] != true || res["current_confirmation_active"] != true {
						t.Errorf("confirmed booking %s after restart: %d %v %v", a.id, status, res, err)
					}
				case a.status == 0:
					// The outcome never reached the client: retrying with the same key
					// either replays a committed booking or finds none.
					unknown++
					status, res, err := call(client, "POST", again.baseURL+"/v1/bookings", token, a.body)
					if err != nil {
						t.Errorf("retry %s: %v", a.key, err)
						continue
					}
					switch {
					case status == 200 && res["idempotent_replay"] == true:
						replayed++
						confirmed = append(confirmed, res["booking"].(map[string]any)["id"].(string))
					case status == 201:
						confirmed = append(confirmed, res["booking"].(map[string]any)["id"].(string))
					case status == 409:
					default:
						t.Errorf("retry %s: %d %v", a.key, status, res)
					}
				}
			}
			t.Logf("%d attempts, %d confirmed (201), %d without an answer at the kill, of which %d had committed (replayed on retry)",
				len(attempts), created.Load(), unknown, replayed)

			db, err := sqlstore.Open(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			count := func(q string, args ...any) int {
				t.Helper()
				var n int
				if err := db.R().QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return n
			}
			for _, id := range confirmed {
				if n := count(`SELECT COUNT(*) FROM outbox_events WHERE booking_id = $1 AND event_type = 'booking.confirmed'`, id); n != 1 {
					t.Errorf("booking %s has %d booking.confirmed events", id, n)
				}
				if n := count(`SELECT COUNT(*) FROM notification_jobs j JOIN outbox_events o ON o.id = j.outbox_id
					WHERE o.booking_id = $1 AND j.booking_id = $1`, id); n != 2 {
					t.Errorf("booking %s has %d notification jobs", id, n)
				}
			}
			if n := count(`SELECT COUNT(*) FROM bookings`); n != len(confirmed) {
				t.Errorf("%d bookings stored, %d confirmed to clients", n, len(confirmed))
			}
			checks := map[string]string{
				"overlapping active booking entries": `SELECT COUNT(*) FROM calendar_entries a JOIN calendar_entries b
					ON a.provider_id = b.provider_id AND a.id < b.id
					WHERE a.active AND b.active AND a.kind = 'booking' AND b.kind = 'booking'
					  AND a.start_at < b.end_at AND b.start_at < a.end_at`,
				"entries without a booking": `SELECT COUNT(*) FROM calendar_entries c WHERE c.kind = 'booking'
					AND NOT EXISTS (SELECT 1 FROM bookings b WHERE b.id = c.booking_id)`,
				"bookings without an active entry": `SELECT COUNT(*) FROM bookings b WHERE NOT EXISTS
					(SELECT 1 FROM calendar_entries c WHERE c.booking_id = b.id AND c.active)`,
				"bookings without their event": `SELECT COUNT(*) FROM bookings b WHERE NOT EXISTS
					(SELECT 1 FROM outbox_events o WHERE o.booking_id = b.id AND o.event_type = 'booking.confirmed')`,
				"events without two jobs": `SELECT COUNT(*) FROM outbox_events o WHERE
					(SELECT COUNT(*) FROM notification_jobs j WHERE j.outbox_id = o.id) <> 2`,
				"events without a booking": `SELECT COUNT(*) FROM outbox_events o WHERE NOT EXISTS
					(SELECT 1 FROM bookings b WHERE b.id = o.booking_id)`,
				"keys without a booking": `SELECT COUNT(*) FROM idempotency_keys k WHERE k.operation = 'bookings.confirm'
					AND NOT EXISTS (SELECT 1 FROM bookings b WHERE b.id = k.resource_id)`,
				"bookings without a key": `SELECT COUNT(*) FROM bookings b WHERE NOT EXISTS
					(SELECT 1 FROM idempotency_keys k WHERE k.resource_id = b.id)`,
			}
			for name, q := range checks {
				if n := count(q); n != 0 {
					t.Errorf("%d %s", n, name)
				}
			}
			for _, logs := range []string{srv.logs.String(), again.logs.String()} {
				for _, pii := range []string{"Greta", "Gåsfot", "46701234567", "greta.gasfot", "Drottninggatan"} {
					if strings.Contains(logs, pii) {
						t.Errorf("the server logs contain %q", pii)
					}
				}
			}
			if err := again.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := <-again.done; err != nil {
				t.Errorf("serve after SIGTERM: %v", err)
			}
		})
	}
}

func TestProviderFeedURL(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	prepareStore(t, dbURL, manyProviders(2))
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"provider", "feed-url", "--database", dbURL, "--base-url", "https://api.example.se"},
		getenvFrom(nil), &out, &errOut)
	if err != nil {
		t.Fatalf("feed-url: %v %s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "prv_load_000 https://api.example.se/calendar/prv_load_000/") ||
		!strings.HasSuffix(lines[0], ".ics") {
		t.Fatalf("output %q", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"provider", "feed-url", "prv_load_000", "--database", dbURL, "--base-url", "https://api.example.se"},
		getenvFrom(nil), &out, &errOut); err != nil || strings.TrimSpace(out.String()) != lines[0] {
		t.Errorf("one provider: %q %v", out.String(), err)
	}
	if err := run(context.Background(), []string{"provider", "feed-url", "prv_nobody", "--database", dbURL}, getenvFrom(nil), io.Discard, io.Discard); err == nil {
		t.Error("an unknown provider has a feed address")
	}

	// The running server answers at the printed address.
	baseURL, _, _, stop := startServe(t, []string{"--database", dbURL}, nil)
	defer stop()
	out.Reset()
	if err := run(context.Background(), []string{"provider", "feed-url", "prv_load_000", "--database", dbURL, "--base-url", baseURL},
		getenvFrom(nil), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	url := strings.Fields(out.String())[1]
	if strings.TrimPrefix(url, baseURL) != strings.TrimPrefix(strings.Fields(lines[0])[1], "https://api.example.se") {
		t.Errorf("the address depends on more than the base URL: %s vs %s", url, lines[0])
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/calendar") ||
		!bytes.Contains(body, []byte("X-WR-CALNAME:Bokat – Rör 000 AB")) {
		t.Errorf("feed: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	resp, err = http.Get(strings.Replace(url, "prv_load_000", "prv_load_001", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("another provider's token answers %d", resp.StatusCode)
	}
}
