package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"bokat/internal/clocktest"
	"bokat/internal/logtest"
	"bokat/internal/ratelimit/redislimit"
	"bokat/internal/ratelimit/redistest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// freeAddr returns a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type got struct {
	status int
	header http.Header
	body   string
}

func fetch(t *testing.T, url string) got {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return got{resp.StatusCode, resp.Header, string(b)}
}

// waitReady returns serve's /readyz answer once the search index is built:
// until then only that check may fail, as warming up.
func waitReady(t *testing.T, base string) got {
	t.Helper()
	r := fetch(t, base+"/readyz")
	for deadline := time.Now().Add(10 * time.Second); r.status == 503 && time.Now().Before(deadline); r = fetch(t, base+"/readyz") {
		if !strings.Contains(r.body, `"failing":["search_index"]`) || !strings.Contains(r.body, `"reason":"warming up"`) {
			t.Fatalf("/readyz before the index is built: %d %s", r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r
}

func TestServeOperatorEndpointsAndRateLimits(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	metricsAddr := freeAddr(t)
	// The program's clock stands still: no read is refilled and Retry-After
	// is exact however slowly the requests run.
	base, _, logs, stop := startServeOn(t, clocktest.New(time.Now()).Now, []string{"--database", dbURL, "--metrics-addr", metricsAddr,
		"--mail-dir", filepath.Join(t.TempDir(), "mail")}, map[string]string{"BOKAT_RATE_READS": "3/min"})

	if r := fetch(t, base+"/healthz"); r.status != 200 || !strings.Contains(r.body, `"status":"ok"`) {
		t.Fatalf("/healthz: %d %s", r.status, r.body)
	}
	r := waitReady(t, base)
	var rep struct {
		Status string `json:"status"`
		Checks []struct{ Name, Status string }
	}
	if err := json.Unmarshal([]byte(r.body), &rep); err != nil || r.status != 200 || rep.Status != "ok" || len(rep.Checks) != 4 {
		t.Fatalf("/readyz: %d %s", r.status, r.body)
	}
	for i, name := range []string{"database", "schema", "workers", "search_index"} {
		if rep.Checks[i].Name != name || rep.Checks[i].Status != "ok" {
			t.Errorf("check %d = %+v, want %s ok", i, rep.Checks[i], name)
		}
	}

	// Metrics live on their own listener only.
	if r := fetch(t, base+"/metrics"); r.status != 404 {
		t.Errorf("/metrics on the API address: %d, want 404", r.status)
	}
	// The reads quota comes from the environment twin of --rate-reads; the
	// 404 above spent one of its 3.
	for i := 1; i <= 2; i++ {
		r := fetch(t, base+"/v1/capabilities")
		if r.status != 200 || r.header.Get("RateLimit-Policy") != `"reads";q=3;w=60` {
			t.Fatalf("request %d: %d %q", i, r.status, r.header.Get("RateLimit-Policy"))
		}
	}
	r = fetch(t, base+"/v1/capabilities")
	if r.status != 429 || r.header.Get("Retry-After") != "20" || !strings.Contains(r.body, `"code":"rate_limited"`) {
		t.Fatalf("fourth read: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}

	m := fetch(t, "http://"+metricsAddr+"/metrics")
	for _, want := range []string{
		`bokat_http_requests_total{method="GET",route="/v1/capabilities",status="200"} 2`,
		`bokat_http_requests_total{method="GET",route="/",status="404"} 1`,
		`bokat_http_requests_total{method="GET",route="/v1/capabilities",status="429"} 1`,
		`bokat_rate_limit_rejections_total{policy="reads"} 1`,
		"bokat_outbox_lag_seconds 0",
		"bokat_notification_lag_seconds 0",
		`bokat_calendar_sync_polls_total{result="failed"} 0`,
		"bokat_calendar_sync_rows_total 0",
		"bokat_calendar_sync_rounds_total",
		"bokat_search_index_warmup_seconds ",
		`bokat_search_index_reloads_total{result="failed"} 0`,
		`bokat_search_index_reloads_total{result="replaced"} 0`,
		"bokat_search_index_reload_seconds 0",
		"go_goroutines",
	} {
		if !strings.Contains(m.body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if !strings.Contains(logs.String(), `"msg":"search index built","duration_ms":`) {
		t.Errorf("no warm-up time logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("errors logged:\n%s", logs.String())
	}
}

func TestServeSharesRateLimitsThroughRedis(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	redisURL := redistest.URL()
	prefix := "bokat-test:" + strings.ToLower(rand.Text()[:12]) + ":"
	// A patient client: the limiter's 250 ms time-out and one retry could
	// spend a request twice, or let one through unchecked, on a busy
	// machine, and the test counts exactly.
	sep := "?"
	if strings.Contains(redisURL, "?") {
		sep = "&"
	}
	patientURL := redisURL + sep + "read_timeout=10s&write_timeout=10s&max_retries=-1"
	env := map[string]string{"BOKAT_REDIS_URL": patientURL, "BOKAT_REDIS_PREFIX": prefix, "BOKAT_RATE_READS": "4/min"}
	// Both instances read one clock that stands still: no read is refilled
	// however slowly the requests run.
	clk := clocktest.New(time.Now())
	a, _, _, _ := startServeOn(t, clk.Now, []string{"--database", migratedSQLite(t), "--mail-dir", t.TempDir()}, env)
	b, _, _, _ := startServeOn(t, clk.Now, []string{"--database", migratedSQLite(t), "--mail-dir", t.TempDir()}, env)
	var statuses []int
	for _, base := range []string{a, b, a, b, a, b} {
		statuses = append(statuses, fetch(t, base+"/v1/capabilities").status)
	}
	if fmt.Sprint(statuses) != "[200 200 200 200 429 429]" {
		t.Fatalf("statuses across two instances = %v, want the quota of 4 shared", statuses)
	}
	// --redis-prefix is the keys' prefix, as documented.
	c, err := redislimit.Dial(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	keys, err := c.Keys(context.Background(), "*"+prefix+"*").Result()
	if err != nil || len(keys) != 1 || !strings.HasPrefix(keys[0], prefix+"reads:") {
		t.Fatalf("keys in Redis = %v, %v; want one starting with %q", keys, err, prefix+"reads:")
	}
	c.Del(context.Background(), keys...)
}

func TestServeFailsOpenWhenRedisIsDown(t *testing.T) {
	t.Parallel()
	base, _, logs, _ := startServe(t, []string{"--database", migratedSQLite(t),
		"--redis", "redis://" + freeAddr(t), "--rate-reads", "1/min", "--mail-dir", t.TempDir()}, nil)
	for i := 0; i < 3; i++ {
		if r := fetch(t, base+"/v1/capabilities"); r.status != 200 {
			t.Fatalf("request %d: %d", i+1, r.status)
		}
	}
	for _, want := range []string{"Redis does not answer", "rate limiter unavailable: requests pass unchecked"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("a log line is not JSON: %s", line)
		}
	}
}

func TestServeRejectsBadOperationsSettings(t *testing.T) {
	t.Parallel()
	pepper := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	prod := []string{"--env", "production", "--token-pepper", pepper, "--secret-key", pepper, "--base-url", "https://api.example.se"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad rate", []string{"--rate-search", "lots"}, "--rate-search"},
		{"bad window", []string{"--rate-writes", "5/fortnight"}, "--rate-writes"},
		{"bad proxy", []string{"--trusted-proxies", "10.0.0.0/8,gateway"}, "--trusted-proxies"},
		{"bad redis", []string{"--redis", "http://127.0.0.1:6379"}, "--redis"},
		{"bad smtp", []string{"--smtp-url", "smtp://u:supersecretpw@mail.example?starttls=maybe"}, "starttls"},
		{"production without smtp", prod, "production requires --smtp-url"},
		{"production without mail-from", append(prod, "--smtp-url", "smtps://u:p@mail.example"), "production requires --mail-from"},
		{"production without a place for /metrics", append(prod, "--smtp-url", "smtps://u:p@mail.example", "--mail-from", "bokat@example.se"),
			"production requires --metrics-addr (BOKAT_METRICS_ADDR), a private address for /metrics, or --metrics-public (BOKAT_METRICS_PUBLIC)"},
		{"production smtp credentials without TLS", append(prod, "--smtp-url", "smtp://u:supersecretpw@mail.example?starttls=none", "--mail-from", "bokat@example.se", "--metrics-public"),
			"--smtp-url: credentials with starttls=none can never authenticate"},
		{"metrics on two addresses", []string{"--metrics-addr", "127.0.0.1:0", "--metrics-public"}, "exclude each other"},
		{"profiles without a private address", []string{"--pprof"}, "--pprof (BOKAT_PPROF) requires --metrics-addr"},
		{"profiles beside public metrics", []string{"--pprof", "--metrics-public"}, "--pprof (BOKAT_PPROF) requires --metrics-addr"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			ctx := clocktest.Patience(t)
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database", migratedSQLite(t)}, tc.args...)
			err := run(ctx, args, getenvFrom(nil), &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
				t.Fatalf("err = %v, want a usage error mentioning %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "supersecretpw") {
				t.Errorf("the error repeats the SMTP password: %v", err)
			}
		})
	}
}

func TestServeReadinessFailsWhenPostgresIsDropped(t *testing.T) {
	t.Parallel()
	if !strings.Contains(strings.Join(engineNames(), ","), "postgres") {
		t.Log("PostgreSQL is not configured (BOKAT_TEST_POSTGRES_URL); the SQLite case is covered in package httpapi")
		return
	}
	dbURL := sqlstoretest.URL(t, sqlstore.Postgres)
	base, _, _, _ := startServe(t, []string{"--database", dbURL, "--mail-dir", t.TempDir()}, nil)
	if r := waitReady(t, base); r.status != 200 {
		t.Fatalf("/readyz: %d %s", r.status, r.body)
	}
	admin, err := sql.Open("pgx", os.Getenv(sqlstoretest.PostgresURLEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := dbURL[strings.LastIndex(dbURL, "/")+1:]
	if i := strings.IndexByte(name, '?'); i >= 0 {
		name = name[:i]
	}
	if _, err := admin.Exec(fmt.Sprintf(`DROP DATABASE %s WITH (FORCE)`, name)); err != nil {
		t.Fatal(err)
	}
	r := fetch(t, base+"/readyz")
	if r.status != 503 || !strings.Contains(r.body, `"failing":["database","schema"]`) || strings.Contains(r.body, name) {
		t.Fatalf("/readyz after the drop: %d %s", r.status, r.body)
	}
	if r := fetch(t, base+"/healthz"); r.status != 200 {
		t.Errorf("/healthz after the drop: %d", r.status)
	}
}

func engineNames() []string {
	var out []string
	for _, e := range sqlstoretest.Engines() {
		out = append(out, string(e))
	}
	return out
}

// In production /metrics (no credential) is on the API address only when
// --metrics-public says so; --metrics-addr moves it to a private address.
func TestProductionMetricsPlacement(t *testing.T) {
	t.Parallel()
	pepper := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	var logs *logtest.Buffer
	start := func(extra ...string) string {
		addr := freeAddr(t)
		var base string
		base, _, logs, _ = startServe(t, append([]string{"--env", "production", "--token-pepper", pepper, "--secret-key", pepper,
			"--smtp-url", "smtps://u:p@mail.example", "--mail-from", "bokat@example.se", "--addr", addr, "--base-url", "http://" + addr,
			"--database", migratedSQLite(t)}, extra...), nil)
		return base
	}
	// A relay without credentials may go without TLS.
	public := start("--metrics-public", "--smtp-url", "smtp://relay.example:25?starttls=none")
	// Bokat's own registry is told by a series present from the start: the
	// backlog gauges are left out of a scrape whose query outlasts its
	// 2 s bound, as it may on a busy machine.
	const bokatSeries = `bokat_booking_changes_total{change="confirmed"}`
	if r := fetch(t, public+"/metrics"); r.status != 200 || !strings.Contains(r.body, bokatSeries) {
		t.Errorf("--metrics-public: /metrics on the API address = %d", r.status)
	}
	if !strings.Contains(logs.String(), "no partner credential exists yet") {
		t.Error("production without a partner did not say so at start-up")
	}
	metricsAddr := freeAddr(t)
	private := start("--metrics-addr", metricsAddr)
	if r := fetch(t, private+"/metrics"); r.status != 404 {
		t.Errorf("--metrics-addr: /metrics on the API address = %d, want 404", r.status)
	}
	if r := fetch(t, "http://"+metricsAddr+"/metrics"); r.status != 200 || !strings.Contains(r.body, bokatSeries) {
		t.Errorf("/metrics on --metrics-addr = %d", r.status)
	}
	// Profiles are opt-in, and only ever on the private address.
	for _, u := range []string{private, "http://" + metricsAddr} {
		if r := fetch(t, u+"/debug/pprof/heap"); r.status != 404 {
			t.Errorf("without --pprof: %s/debug/pprof/heap = %d, want 404", u, r.status)
		}
	}
	profAddr := freeAddr(t)
	profiled := start("--metrics-addr", profAddr, "--pprof")
	if r := fetch(t, profiled+"/debug/pprof/heap"); r.status != 404 {
		t.Errorf("--pprof: /debug/pprof/heap on the API address = %d, want 404", r.status)
	}
	if r := fetch(t, "http://"+profAddr+"/debug/pprof/heap?debug=1"); r.status != 200 || !strings.Contains(r.body, "heap profile:") {
		t.Errorf("--pprof: /debug/pprof/heap on --metrics-addr = %d", r.status)
	}
	if r := fetch(t, "http://"+profAddr+"/debug/pprof/goroutine?debug=1"); r.status != 200 || !strings.Contains(r.body, "goroutine profile:") {
		t.Errorf("--pprof: /debug/pprof/goroutine on --metrics-addr = %d", r.status)
	}
}

// The metrics listener has the API's timeouts: a client cannot hold a
// connection open idle, nor trickle a request.
func TestMetricsServerHasTimeouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "bokat.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	op, err := setupOps(ctx, opsConfig{MetricsAddr: "127.0.0.1:0", MailFrom: defaultMailFrom, MailDir: t.TempDir()}, db, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer op.close()
	s := op.metricsServer
	if s == nil || s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 || s.MaxHeaderBytes <= 0 {
		t.Fatalf("metrics server = %+v, want every timeout and a header limit set", s)
	}
}
