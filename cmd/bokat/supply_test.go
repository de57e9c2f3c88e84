package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bokat/internal/supply"
)

func TestSupplyImportReportsProblemsAndIsIdempotent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := migratedSQLite(t)
	good := filepath.Join(dir, "supply.yaml")
	if err := os.WriteFile(good, supply.Demo(), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	broken := strings.Replace(string(supply.Demo()), "price_sek: 1890", "price_sek: gratis", 1)
	broken = strings.Replace(broken, "postcodes: *goteborg", "postcodes: [\"4x1\"]", 1)
	if err := os.WriteFile(bad, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	importFile := func(name string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"supply", "import", name, "--database", dbURL}, getenvFrom(nil), &stdout, &stderr)
		return stdout.String(), stderr.String(), err
	}

	out, errOut, err := importFile(bad)
	if err == nil || !strings.Contains(err.Error(), "2 problem(s); nothing was imported") || out != "" {
		t.Fatalf("bad file: err %v, stdout %q", err, out)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], bad+":26:") || !strings.Contains(lines[0], "providers[0].services[1].price_sek: must be a whole number") ||
		!strings.HasPrefix(lines[1], bad+":") || !strings.Contains(lines[1], `providers[6].postcodes[0]: "4x1" is not a postcode`) {
		t.Errorf("stderr =\n%s", errOut)
	}

	out, _, err = importFile(good)
	if err != nil || !strings.Contains(out, "16 providers: 16 created, 0 updated, 0 unchanged") {
		t.Fatalf("first import: %v, %q", err, out)
	}
	out, _, err = importFile(good)
	if err != nil || !strings.Contains(out, "16 providers: 0 created, 0 updated, 16 unchanged") {
		t.Fatalf("second import: %v, %q", err, out)
	}

	var stderr bytes.Buffer
	err = run(context.Background(), []string{"supply", "import"}, getenvFrom(nil), &bytes.Buffer{}, &stderr)
	if exitCode(err) != 2 {
		t.Errorf("no file: err %v, want a usage error", err)
	}
}

func TestServeDemoSearchesTheDemoSupply(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	baseURL, _, _, stop := startServe(t, []string{"--demo", "--database", dbURL}, nil)
	body := `{"vertical_id":"cleaning","job_type_id":"cleaning_window","description":"Fönsterputs i en trea.",
		"location":{"country_code":"SE","postcode":"211 22"},"timing":{"urgency":"inom två veckor"},"details":{"window_count":8}}`
	resp, err := http.Post(baseURL+"/v1/booking-options", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		DirectBookingAvailable bool `json:"direct_booking_available"`
		Options                []struct {
			ID       string `json:"booking_option_id"`
			Provider struct {
				ID string `json:"id"`
			} `json:"provider"`
			Terms struct {
				URL string `json:"url"`
			} `json:"terms"`
		} `json:"options"`
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !got.DirectBookingAvailable || len(got.Options) != 3 {
		t.Fatalf("search: status %d, err %v, %+v", resp.StatusCode, err, got)
	}
	if got.Options[0].Provider.ID != "prv_malmo_stad" || !strings.HasPrefix(got.Options[0].ID, "bo2.dev.") ||
		got.Options[0].Terms.URL != baseURL+"/terms/cleaning_window_per_window" {
		t.Errorf("option = %+v", got.Options[0])
	}
	page, err := http.Get(got.Options[0].Terms.URL)
	if err != nil || page.StatusCode != 200 {
		t.Errorf("terms page: %v %v", page.StatusCode, err)
	}
	page.Body.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestProductionWithoutSigningKeysStartsAndAnswers503(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	pepper := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	// Production requires --base-url; it must name the address served here,
	// since the test reaches the server through the address it prints.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	baseURL, _, logs, stop := startServe(t, []string{"--env", "production", "--token-pepper", pepper,
		"--secret-key", pepper, "--smtp-url", "smtps://u:p@mail.example", "--mail-from", "bokat@example.se", "--addr", addr, "--base-url", "http://" + addr, "--database", dbURL, "--metrics-addr", "127.0.0.1:0"}, nil)
	body := `{"vertical_id":"vvs","job_type_id":"install_faucet","description":"Byta köksblandare.",
		"location":{"country_code":"SE","postcode":"113 45"},"timing":{"urgency":"snart"}}`
	resp, err := http.Post(baseURL+"/v1/booking-options", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var problem map[string]any
	json.NewDecoder(resp.Body).Decode(&problem)
	resp.Body.Close()
	if resp.StatusCode != 503 || problem["code"] != "option_signing_not_configured" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("status %d, body %v", resp.StatusCode, problem)
	}
	if !strings.Contains(logs.String(), "no option signing keys configured") {
		t.Error("no warning about the missing keys in the log")
	}
	stop()
}

func TestOptionSigningKeysFlag(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--database", dbURL, "--option-signing-keys", "k1:tooshort"},
		getenvFrom(nil), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--option-signing-keys") {
		t.Errorf("short key: %v", err)
	}
	err = run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--database", dbURL, "--option-ttl", "500ms"},
		getenvFrom(nil), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--option-ttl") {
		t.Errorf("ttl 500ms: %v", err)
	}
	key := "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWY=" // 32 bytes
	baseURL, _, _, stop := startServe(t, []string{"--demo", "--database", dbURL}, map[string]string{"BOKAT_OPTION_SIGNING_KEYS": "prod2:" + key})
	body := `{"vertical_id":"vvs","job_type_id":"install_faucet","description":"Byta köksblandare.",
		"location":{"country_code":"SE","postcode":"113 45"},"timing":{"urgency":"inom två veckor"}}`
	resp, err := http.Post(baseURL+"/v1/booking-options", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Options []struct {
			ID string `json:"booking_option_id"`
		} `json:"options"`
	}
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if len(got.Options) == 0 || !strings.HasPrefix(got.Options[0].ID, "bo2.prod2.") {
		t.Errorf("options %+v, want ids signed with prod2", got.Options)
	}
	stop()
}

func TestSupplyGenerateIsReproducibleAndImports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "gen.yaml")
	args := []string{"supply", "generate", "--providers", "40", "--seed", "5", "--from", "2026-11-24"}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, getenvFrom(nil), &stdout, &stderr); err != nil {
		t.Fatalf("generate: %v: %s", err, stderr.String())
	}
	var out bytes.Buffer
	if err := run(context.Background(), append(args, "--out", file), getenvFrom(nil), &out, &stderr); err != nil {
		t.Fatalf("generate --out: %v", err)
	}
	written, err := os.ReadFile(file)
	if err != nil || !bytes.Equal(written, stdout.Bytes()) || out.String() != "wrote "+file+": 40 providers\n" {
		t.Fatalf("file and standard output differ (%v); stdout %q", err, out.String())
	}
	if n := strings.Count(stdout.String(), "{start: "); n != 40*40 {
		t.Errorf("%d blocked periods, want 1600", n)
	}
	out.Reset()
	err = run(context.Background(), []string{"supply", "import", file, "--database", "sqlite:" + filepath.Join(dir, "b.db")},
		getenvFrom(nil), &out, &stderr)
	if err != nil || !strings.Contains(out.String(), "40 providers: 40 created") {
		t.Fatalf("import: %v, %q", err, out.String())
	}
	national := filepath.Join(dir, "national.yaml")
	out.Reset()
	if err := run(context.Background(), append(args, "--national", "--out", national), getenvFrom(nil), &out, &stderr); err != nil {
		t.Fatalf("generate --national: %v: %s", err, stderr.String())
	}
	if nat, err := os.ReadFile(national); err != nil || bytes.Equal(nat, written) || !bytes.Contains(nat, []byte("generate --national --providers 40")) {
		t.Fatalf("national file: %v", err)
	}
	out.Reset()
	err = run(context.Background(), []string{"supply", "import", national, "--database", "sqlite:" + filepath.Join(dir, "b.db")},
		getenvFrom(nil), &out, &stderr)
	if err != nil || !strings.Contains(out.String(), "40 providers: 0 created, 40 updated, 0 unchanged") { // the same ids, elsewhere
		t.Fatalf("import national: %v, %q", err, out.String())
	}
	for _, bad := range [][]string{{"--providers", "0"}, {"--seed", "-1"}, {"--from", "24/11"}, {"--busy-hours", "500"}, {"extra"},
		{"--national", "--postcodes", "111"}} {
		err := run(context.Background(), append([]string{"supply", "generate"}, bad...), getenvFrom(nil), &bytes.Buffer{}, &bytes.Buffer{})
		if exitCode(err) != 2 {
			t.Errorf("%v: err %v, want a usage error", bad, err)
		}
	}
}
