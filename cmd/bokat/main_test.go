package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"bokat/internal/clocktest"
	"bokat/internal/logtest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// migratedSQLite returns the --database URL of a new SQLite file of the
// test, already migrated (a copy of a migrated template): migrating one
// costs more than most tests that start serve. Tests of migrating a new
// database name a new file themselves.
func migratedSQLite(t *testing.T) string {
	t.Helper()
	return sqlstoretest.URL(t, sqlstore.SQLite)
}

// getenvFrom returns a getenv over a fixed map, so tests never read the
// machine's environment.
func getenvFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestPartnerCreatePrintsOneJSONObjectAndStoresOnlyAHash(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "bokat.db")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"partner", "create", "--name", "Acme AB",
		"--scopes", "service.bookings.search,service.bookings.confirm", "--database", "sqlite:" + dbPath},
		getenvFrom(nil), &stdout, &stderr)
	if err != nil {
		t.Fatalf("partner create: %v (stderr: %s)", err, stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	var out struct {
		ClientID string `json:"client_id"`
		Token    string `json:"token"`
	}
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("stdout is not one JSON object {client_id, token}: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON value")
	}
	if !strings.HasPrefix(out.ClientID, "pc_") || !regexp.MustCompile(`^bkp_[A-Za-z0-9_-]{43}$`).MatchString(out.Token) {
		t.Fatalf("got client_id %q token %q, want pc_… and bkp_ + 43 base64url chars (256 bits)", out.ClientID, out.Token)
	}

	db, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var name, scopes, hash string
	if err := db.QueryRow(`SELECT name, scopes, token_hash FROM partner_clients WHERE id = $1`, out.ClientID).Scan(&name, &scopes, &hash); err != nil {
		t.Fatalf("partner client not stored: %v", err)
	}
	if name != "Acme AB" || scopes != "service.bookings.search service.bookings.confirm" {
		t.Fatalf("stored name %q scopes %q", name, scopes)
	}
	if hash == out.Token || strings.Contains(hash, out.Token[4:]) || len(hash) != 64 {
		t.Fatalf("stored token_hash %q is not a keyed hash of the token", hash)
	}
	raw, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if wal, err := os.ReadFile(dbPath + "-wal"); err == nil {
		raw = append(raw, wal...)
	}
	if bytes.Contains(raw, []byte(out.Token[4:])) {
		t.Fatal("the database file contains the token in clear")
	}
}

func TestPartnerCreateRejectsBadArguments(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	cases := map[string][]string{
		"unknown scope": {"partner", "create", "--name", "A", "--scopes", "service.bookings.search,service.everything", "--database", dbURL},
		"no name":       {"partner", "create", "--scopes", "all", "--database", dbURL},
		"no scopes":     {"partner", "create", "--name", "A", "--database", dbURL},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, getenvFrom(nil), &stdout, &stderr)
			if err == nil || exitCode(err) != 2 {
				t.Fatalf("err = %v, want a usage error", err)
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

func TestProductionRefusesDevelopmentOnlySettings(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	pepper := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"auth-optional flag", []string{"serve", "--env", "production", "--auth-optional", "--token-pepper", pepper, "--base-url", "https://api.example.se"}, nil, "--auth-optional is development only"},
		{"auth-optional env", []string{"serve", "--token-pepper", pepper, "--base-url", "https://api.example.se"}, map[string]string{"BOKAT_ENV": "production", "BOKAT_AUTH_OPTIONAL": "true"}, "environment variable BOKAT_AUTH_OPTIONAL is development only"},
		{"demo flag", []string{"serve", "--env", "production", "--demo", "--token-pepper", pepper, "--base-url", "https://api.example.se"}, nil, "--demo is development only"},
		{"missing pepper", []string{"serve", "--env", "production", "--base-url", "https://api.example.se"}, nil, "BOKAT_TOKEN_PEPPER"},
		{"missing base url", []string{"serve", "--env", "production", "--token-pepper", pepper}, nil, "--base-url"},
		{"webhook-allow-private flag", []string{"serve", "--env", "production", "--webhook-allow-private", "--token-pepper", pepper, "--base-url", "https://api.example.se", "--secret-key", pepper}, nil, "--webhook-allow-private is development only"},
		{"webhook-allow-private env", []string{"serve", "--env", "production", "--token-pepper", pepper, "--base-url", "https://api.example.se", "--secret-key", pepper}, map[string]string{"BOKAT_WEBHOOK_ALLOW_PRIVATE": "1"}, "environment variable BOKAT_WEBHOOK_ALLOW_PRIVATE is development only"},
		{"missing secret key", []string{"serve", "--env", "production", "--token-pepper", pepper, "--base-url", "https://api.example.se"}, nil, "BOKAT_SECRET_KEY"},
		{"short option ttl flag", []string{"serve", "--env", "production", "--token-pepper", pepper, "--base-url", "https://api.example.se", "--secret-key", pepper, "--option-ttl", "59s"}, nil, "--option-ttl: must be at least 1m0s in production"},
		{"short option ttl env", []string{"serve", "--env", "production", "--token-pepper", pepper, "--base-url", "https://api.example.se", "--secret-key", pepper}, map[string]string{"BOKAT_OPTION_TTL": "1s"}, "environment variable BOKAT_OPTION_TTL: must be at least 1m0s in production"},
		{"unknown env", []string{"serve", "--env", "staging"}, nil, "development or production"},
		{"plain http base url", []string{"serve", "--env", "production", "--token-pepper", pepper, "--secret-key", pepper, "--base-url", "http://api.example.se"}, nil, "https --base-url"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"BOKAT_DATABASE_URL": dbURL}
			for k, v := range tc.env {
				env[k] = v
			}
			ctx := clocktest.Patience(t)
			var stdout, stderr bytes.Buffer
			err := run(ctx, append(tc.args, "--addr", "127.0.0.1:0"), getenvFrom(env), &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestMigrateReportsTheSchemaVersion(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "bokat.db")
	if err := run(context.Background(), []string{"migrate", "--database", dbURL}, getenvFrom(nil), &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^database schema at version [1-9][0-9]* \(sqlite\)\n$`).MatchString(stdout.String()) {
		t.Fatalf("stdout = %q", stdout.String())
	}
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"frobnicate"}, getenvFrom(nil), io.Discard, io.Discard)
	if exitCode(err) != 2 {
		t.Fatalf("err = %v, want usage error", err)
	}
}

// startServe runs `bokat serve` on a free port and returns its base URL, the
// printed development token (with --demo), and a stop function that returns
// run's error.
func startServe(t *testing.T, args []string, env map[string]string) (baseURL, token string, logs *logtest.Buffer, stop func() error) {
	t.Helper()
	return startServeOn(t, time.Now, args, env)
}

// startServeOn is startServe with the program on the clock now.
func startServeOn(t *testing.T, now func() time.Time, args []string, env map[string]string) (baseURL, token string, logs *logtest.Buffer, stop func() error) {
	t.Helper()
	return startServeHooked(t, now, hooks{}, args, env)
}

// startServeHooked is startServeOn with the test hooks h.
func startServeHooked(t *testing.T, now func() time.Time, h hooks, args []string, vars map[string]string) (baseURL, token string, logs *logtest.Buffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	logs = &logtest.Buffer{}
	done := make(chan error, 1)
	go func() {
		// Mail goes to a folder of the test, never into the source tree.
		err := runIn(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--mail-dir", filepath.Join(t.TempDir(), "mail")}, args...),
			env{getenv: getenvFrom(vars), stdout: pw, stderr: logs, now: now, hooks: h})
		pw.Close()
		done <- err
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, pr)
	}()
	patience := clocktest.Patience(t)
	for baseURL == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				cancel()
				t.Fatalf("serve exited before listening: %v; logs: %s", <-done, logs.String())
			}
			if rest, ok := strings.CutPrefix(line, "Development partner token (every scope): "); ok {
				token = rest
			}
			if rest, ok := strings.CutPrefix(line, "bokat listening on "); ok {
				baseURL = strings.Fields(rest)[0]
			}
		case <-patience.Done():
			cancel()
			t.Fatalf("serve did not start before the test binary's deadline; logs: %s", logs.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-clocktest.Patience(t).Done():
				t.Error("serve did not stop before the test binary's deadline")
			}
		})
		return stopErr
	}
	t.Cleanup(func() { stop() })
	return baseURL, token, logs, stop
}

func TestServeDemoAnswersCapabilitiesAndShutsDownCleanly(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	baseURL, token, _, stop := startServe(t, []string{"--demo", "--database", dbURL}, nil)
	if !strings.HasPrefix(token, "bkp_") {
		t.Fatalf("serve --demo printed token %q", token)
	}
	resp, err := http.Get(baseURL + "/v1/capabilities")
	if err != nil {
		t.Fatal(err)
	}
	var caps map[string]any
	err = json.NewDecoder(resp.Body).Decode(&caps)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("capabilities: status %d, err %v", resp.StatusCode, err)
	}
	for _, k := range []string{"api_request_id", "trace_id", "contract_version", "server_time", "supported_verticals", "auth", "agent_contract"} {
		if _, ok := caps[k]; !ok {
			t.Errorf("capabilities lacks %q", k)
		}
	}
	if n := len(caps["supported_verticals"].([]any)); n != 4 {
		t.Errorf("supported_verticals has %d entries, want 4", n)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v on shutdown, want nil", err)
	}

	// The development token is stable across restarts of the same database.
	_, again, _, stop2 := startServe(t, []string{"--demo", "--database", dbURL}, nil)
	if again != token {
		t.Errorf("restart printed token %q, want the same %q", again, token)
	}
	stop2()
}
