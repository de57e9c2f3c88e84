package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bokat/internal/clocktest"
)

// Every setting's environment twin is parsed by the flag's own code: a value
// that does not parse stops the program with a usage error naming the
// variable (or, given as a flag, the flag), and never repeats the value
// when it may be a secret.
func TestBadSettingsStopTheProgramFromFlagOrEnvironment(t *testing.T) {
	t.Parallel()
	const secret = "supersecretpw"
	goodKey := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	cases := []struct {
		kind, command, flag, env, value, want string
	}{
		{"duration without unit", "serve", "option-ttl", "BOKAT_OPTION_TTL", "5", "not a duration"},
		{"duration out of range", "serve", "option-ttl", "BOKAT_OPTION_TTL", "500ms", "between 1s and 24h0m0s"},
		{"duration out of range", "serve", "option-ttl", "BOKAT_OPTION_TTL", "25h", "between 1s and 24h0m0s"},
		{"duration", "serve", "shutdown-timeout", "BOKAT_SHUTDOWN_TIMEOUT", "soon", "not a duration"},
		{"date", "serve", "legacy-sunset", "BOKAT_LEGACY_SUNSET", "30 June 2027", "not a date"},
		{"date", "serve", "legacy-sunset", "BOKAT_LEGACY_SUNSET", "2027-02-30", "not a date"},
		{"bool", "serve", "demo", "BOKAT_DEMO", "yes", "must be true or false"},
		{"bool", "serve", "auth-optional", "BOKAT_AUTH_OPTIONAL", "on", "must be true or false"},
		{"bool", "serve", "webhook-allow-private", "BOKAT_WEBHOOK_ALLOW_PRIVATE", "maybe", "must be true or false"},
		{"enum", "serve", "env", "BOKAT_ENV", "staging", "development or production"},
		{"enum", "migrate", "log-level", "BOKAT_LOG_LEVEL", "loud", "not a log level"},
		{"rate", "serve", "rate-search", "BOKAT_RATE_SEARCH", "lots", "want N/period"},
		{"rate with a fraction", "serve", "rate-writes", "BOKAT_RATE_WRITES", "2.5/min", "not a whole number"},
		{"rate period", "serve", "rate-reads", "BOKAT_RATE_READS", "5/fortnight", "period"},
		{"list of addresses", "serve", "trusted-proxies", "BOKAT_TRUSTED_PROXIES", "10.0.0.0/8,gateway", "neither an address nor a CIDR"},
		{"list of keys", "serve", "secret-key", "BOKAT_SECRET_KEY", goodKey + "," + secret, "secret key 2"},
		{"list of key pairs", "serve", "option-signing-keys", "BOKAT_OPTION_SIGNING_KEYS", "k1" + secret, "kid:base64key"},
		{"key", "serve", "token-pepper", "BOKAT_TOKEN_PEPPER", secret + "!!", "must be base64"},
		{"short key", "partner", "token-pepper", "BOKAT_TOKEN_PEPPER", "c2hvcnQ=", "at least 32 bytes"},
		{"URL", "serve", "base-url", "BOKAT_BASE_URL", "api.example.se", "absolute http(s) URL"},
		{"URL", "provider", "base-url", "BOKAT_BASE_URL", "ftp://api.example.se", "absolute http(s) URL"},
		{"URL with a password", "serve", "redis", "BOKAT_REDIS_URL", "http://u:" + secret + "@127.0.0.1:6379", "redis://"},
		{"URL with a password", "serve", "smtp-url", "BOKAT_SMTP_URL", "smtp://u:" + secret + "@mail.example?starttls=maybe", "starttls"},
		{"URL with a password", "migrate", "database", "BOKAT_DATABASE_URL", "mysql://u:" + secret + "@db/bokat", "sqlite: or postgres://"},
		{"address", "serve", "addr", "BOKAT_ADDR", "8080", "not host:port"},
		{"address", "serve", "metrics-addr", "BOKAT_METRICS_ADDR", "localhost", "not host:port"},
		{"e-mail address", "serve", "mail-from", "BOKAT_MAIL_FROM", "Bokat", "not an e-mail address"},
	}
	for _, tc := range cases {
		for _, from := range []string{"environment", "flag"} {
			t.Run(tc.kind+"/"+tc.flag+"/"+from, func(t *testing.T) {
				t.Parallel()
				dbURL := "sqlite:" + filepath.Join(t.TempDir(), "bokat.db")
				args := append(strings.Fields(tc.command), "--mail-dir", t.TempDir())
				switch tc.command {
				case "serve":
					if tc.flag != "addr" {
						args = append(args, "--addr", "127.0.0.1:0")
					}
				case "partner":
					args = []string{"partner", "create", "--name", "A", "--scopes", "all"}
				case "provider":
					args = []string{"provider", "feed-url"}
				case "migrate":
					args = []string{"migrate"}
				}
				env := map[string]string{}
				if tc.flag != "database" {
					env["BOKAT_DATABASE_URL"] = dbURL
				}
				wantSource := "environment variable " + tc.env
				if from == "environment" {
					env[tc.env] = tc.value
				} else {
					args = append(args, "--"+tc.flag+"="+tc.value)
					wantSource = "--" + tc.flag
				}
				ctx := clocktest.Patience(t)
				var stdout, stderr bytes.Buffer
				err := run(ctx, args, getenvFrom(env), &stdout, &stderr)
				if err == nil {
					t.Fatalf("%s=%q was accepted; stdout: %s", tc.env, tc.value, stdout.String())
				}
				if exitCode(err) != 2 {
					t.Errorf("exit code %d (%v), want 2, a usage error", exitCode(err), err)
				}
				if msg := err.Error(); !strings.Contains(msg, wantSource+": ") || !strings.Contains(msg, tc.want) {
					t.Errorf("error = %q, want it to name %q and say %q", msg, wantSource, tc.want)
				}
				if strings.Contains(err.Error()+stderr.String()+stdout.String(), secret) {
					t.Errorf("the output repeats the value: %v\n%s", err, stderr.String())
				}
			})
		}
	}
}

// Good values from the environment take effect, and the command line wins
// over the environment.
func TestEnvironmentSettingsTakeEffect(t *testing.T) {
	t.Parallel()
	baseURL, token, logs, stop := startServe(t, []string{"--database", migratedSQLite(t), "--log-level", "debug"},
		map[string]string{"BOKAT_DEMO": "1", "BOKAT_OPTION_TTL": "5m", "BOKAT_LOG_LEVEL": "error", "BOKAT_LEGACY_SUNSET": "2027-06-30"})
	if !strings.HasPrefix(token, "bkp_") {
		t.Fatalf("BOKAT_DEMO=1 printed no development token (%q)", token)
	}
	body := `{"vertical_id":"cleaning","job_type_id":"cleaning_window","description":"Fönsterputs i en trea.",
		"location":{"country_code":"SE","postcode":"211 22"},"timing":{"urgency":"inom två veckor"},"details":{"window_count":8}}`
	before := time.Now()
	resp, err := http.Post(baseURL+"/v1/booking-options", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Options []struct {
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"options"`
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(got.Options) == 0 {
		t.Fatalf("search: %d %v %+v", resp.StatusCode, err, got)
	}
	// The API rounds instants to the second.
	if ttl := got.Options[0].ExpiresAt.Sub(before); ttl < 5*time.Minute-time.Second || ttl > 5*time.Minute+2*time.Second {
		t.Errorf("expires_at is %v after the search, want BOKAT_OPTION_TTL=5m", ttl)
	}
	legacy, err := http.Get(baseURL + "/api/public/requests/capabilities")
	if err != nil {
		t.Fatal(err)
	}
	legacy.Body.Close()
	if got := legacy.Header.Get("Sunset"); got != "Wed, 30 Jun 2027 00:00:00 GMT" {
		t.Errorf("legacy Sunset = %q, want BOKAT_LEGACY_SUNSET=2027-06-30 as an HTTP-date", got)
	}
	fetch(t, baseURL+"/healthz")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"level":"DEBUG"`) {
		t.Errorf("--log-level debug lost to BOKAT_LOG_LEVEL=error: no debug line in\n%s", logs.String())
	}
}

// In development --option-ttl goes down to 1s, so an integrator can see an
// option expire: a confirmation after its expires_at answers 409
// booking_option_expired. The program runs on the test's clock, which the
// test moves past the expiry rather than sleeping until it.
func TestShortOptionTTLLetsDevelopmentExerciseExpiry(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now())
	baseURL, token, _, stop := startServeOn(t, clock.Now, []string{"--demo", "--database", migratedSQLite(t), "--option-ttl", "1s"}, nil)
	defer stop()
	status, res, err := call(http.DefaultClient, "POST", baseURL+"/v1/booking-options", token, crashSearch)
	if err != nil || status != 200 {
		t.Fatalf("search: %d %v", status, err)
	}
	options, _ := res["options"].([]any)
	if len(options) == 0 {
		t.Fatalf("search found no option: %v", res)
	}
	option := options[0].(map[string]any)
	expires, err := time.Parse(time.RFC3339, option["expires_at"].(string))
	if err != nil || expires.Sub(clock.Now()) > 2*time.Second {
		t.Fatalf("expires_at %v (%v), want within 1s of now", option["expires_at"], err)
	}
	clock.Set(expires.Add(1100 * time.Millisecond))
	status, res, err = call(http.DefaultClient, "POST", baseURL+"/v1/bookings", token, crashConfirm(option, "ttl-1s"))
	if err != nil || status != 409 || res["code"] != "booking_option_expired" {
		t.Fatalf("confirm after expiry: %d %v %v, want 409 booking_option_expired", status, res, err)
	}
}
