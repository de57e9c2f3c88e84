package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"bokat/internal/auth"
	"bokat/internal/clocktest"
	"bokat/internal/credentials"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// The lifecycle commands against a running serve on the same database, on
// each engine, with one injected clock for both: what the commands change
// is what serve answers next.
func TestCredentialCommandsOnServe(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			dbURL := sqlstoretest.URL(t, engine)
			t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
			clock := clocktest.New(t0)
			env := map[string]string{"BOKAT_TOKEN_PEPPER": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}
			baseURL, _, _, _ := startServeOn(t, clock.Now, []string{"--database", dbURL}, env)
			cli := func(args ...string) (string, error) {
				t.Helper()
				var out bytes.Buffer
				err := runOn(context.Background(), clock.Now, append(args, "--database", dbURL), getenvFrom(env), &out, io.Discard)
				return out.String(), err
			}
			mustCLI := func(args ...string) string {
				t.Helper()
				out, err := cli(args...)
				if err != nil {
					t.Fatalf("bokat %s: %v", strings.Join(args, " "), err)
				}
				return out
			}
			call := func(token string) int {
				t.Helper()
				req, _ := http.NewRequest("GET", baseURL+"/v1/webhook-endpoints", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}

			var created struct {
				ClientID string `json:"client_id"`
				Token    string `json:"token"`
			}
			if err := json.Unmarshal([]byte(mustCLI("partner", "create", "--name", "Acme", "--scopes", "all")), &created); err != nil {
				t.Fatal(err)
			}
			if s := call(created.Token); s != 200 {
				t.Fatalf("the created token: %d", s)
			}

			var rotated struct {
				ClientID           string  `json:"client_id"`
				Token              string  `json:"token"`
				PreviousValidUntil *string `json:"previous_token_valid_until"`
			}
			out := mustCLI("partner", "rotate", created.ClientID, "--overlap", "2h")
			if err := json.Unmarshal([]byte(out), &rotated); err != nil || rotated.ClientID != created.ClientID ||
				!strings.HasPrefix(rotated.Token, "bkp_") || rotated.PreviousValidUntil == nil ||
				*rotated.PreviousValidUntil != t0.Add(2*time.Hour).Format(time.RFC3339) || strings.Count(out, "\n") != 1 {
				t.Fatalf("rotate printed %q (%v)", out, err)
			}
			if a, b := call(created.Token), call(rotated.Token); a != 200 || b != 200 {
				t.Fatalf("during the overlap: old %d, new %d; want both 200", a, b)
			}

			// The list: a table and JSON, with last use and state, no token.
			table := mustCLI("partner", "list")
			if !strings.Contains(table, created.ClientID) || !strings.Contains(table, "rotating (previous token until "+
				t0.Add(2*time.Hour).Format(time.RFC3339)) || !strings.HasPrefix(table, "ID ") {
				t.Errorf("partner list:\n%s", table)
			}
			var listed []map[string]any
			if err := json.Unmarshal([]byte(mustCLI("partner", "list", "--json")), &listed); err != nil || len(listed) != 1 {
				t.Fatalf("partner list --json: %v %v", listed, err)
			}
			if listed[0]["last_used_at"] != t0.Format(time.RFC3339) || listed[0]["state"] != "rotating" ||
				listed[0]["previous_token_last_used_at"] != t0.Format(time.RFC3339) {
				t.Errorf("partner list --json: %v", listed[0])
			}
			for _, listing := range []string{table, mustCLI("partner", "list", "--json")} {
				if strings.Contains(listing, created.Token) || strings.Contains(listing, rotated.Token) {
					t.Errorf("a listing shows a token:\n%s", listing)
				}
			}

			clock.Advance(2 * time.Hour)
			if a, b := call(created.Token), call(rotated.Token); a != 401 || b != 200 {
				t.Fatalf("after the overlap: old %d, new %d; want 401 and 200", a, b)
			}
			if out := mustCLI("partner", "revoke", created.ClientID); !strings.Contains(out, created.ClientID+" revoked") {
				t.Errorf("revoke printed %q", out)
			}
			if s := call(rotated.Token); s != 401 {
				t.Fatalf("after the revocation: %d, want 401", s)
			}
			for name, args := range map[string][]string{
				"revoke again":       {"partner", "revoke", created.ClientID},
				"rotate revoked":     {"partner", "rotate", created.ClientID},
				"unknown partner":    {"partner", "revoke", "pc_nobody"},
				"no partner":         {"partner", "rotate"},
				"negative overlap":   {"partner", "rotate", created.ClientID, "--overlap", "-1h"},
				"overlap too long":   {"partner", "rotate", created.ClientID, "--overlap", "31d"},
				"purge too soon":     {"oauth-client", "purge", "--unused-for", "2h"},
				"revoke no client":   {"oauth-client", "revoke"},
				"list with an id":    {"partner", "list", created.ClientID},
				"unknown sub-verb":   {"partner", "delete", created.ClientID},
				"unknown oauth verb": {"oauth-client", "delete", created.ClientID},
			} {
				if _, err := cli(args...); err == nil {
					t.Errorf("%s: succeeded", name)
				}
			}

			// OAuth clients: create, list, revoke, purge.
			var client struct {
				ClientID string `json:"client_id"`
				Secret   string `json:"client_secret"`
			}
			if err := json.Unmarshal([]byte(mustCLI("oauth-client", "create", "--name", "Assistent", "--redirect-uri",
				"https://assistent.example/cb")), &client); err != nil || client.Secret == "" {
				t.Fatalf("oauth-client create: %+v %v", client, err)
			}
			clients := mustCLI("oauth-client", "list")
			if !strings.Contains(clients, client.ClientID) || !strings.Contains(clients, "operator") ||
				!strings.Contains(clients, "confidential") || strings.Contains(clients, client.Secret) {
				t.Errorf("oauth-client list:\n%s", clients)
			}
			if out := mustCLI("oauth-client", "revoke", client.ClientID); !strings.Contains(out, client.ClientID+" revoked") {
				t.Errorf("oauth-client revoke printed %q", out)
			}
			if out := mustCLI("oauth-client", "purge", "--unused-for", "90d"); out != "" {
				t.Errorf("purge with no dynamic client printed %q", out)
			}

			// Every change is in the operator audit, by the CLI's user.
			db, err := sqlstore.Open(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			hasher, _ := auth.NewHasher(bytes.Repeat([]byte("x"), 32))
			rows, err := credentials.New(sqlstore.Bind[credentials.Tx](db), hasher, clock.Now).Audit(context.Background(), credentials.AuditQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var actions []string
			for _, r := range rows {
				if !strings.HasPrefix(r.Actor, "cli:") || r.Actor == "cli:" {
					t.Errorf("audit actor %q, want cli:<os user>", r.Actor)
				}
				actions = append(actions, r.Action)
			}
			want := "oauth_client.revoked oauth_client.created partner.revoked partner.rotated partner.created"
			if got := strings.Join(actions, " "); got != want {
				t.Errorf("audit actions %q, want %q", got, want)
			}
		})
	}
}

// serve purges the dynamically registered clients unused for
// --purge-dynamic-clients at start-up (and hourly), as its job actor.
func TestServePurgesUnusedDynamicClients(t *testing.T) {
	t.Parallel()
	dbURL := sqlstoretest.URL(t, sqlstore.SQLite)
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	clock := clocktest.New(t0)
	baseURL, _, _, stop := startServeOn(t, clock.Now, []string{"--database", dbURL}, nil)
	resp, err := http.Post(baseURL+"/oauth/register", "application/json",
		strings.NewReader(`{"redirect_uris":["http://127.0.0.1:8123/callback"],"client_name":"Kortlivad"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %v", resp.StatusCode, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	db, err := sqlstore.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hasher, _ := auth.NewHasher(bytes.Repeat([]byte("x"), 32))
	svc := credentials.New(sqlstore.Bind[credentials.Tx](db), hasher, clock.Now)
	listed := func() bool {
		all, err := svc.OAuthClients(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range all {
			if c.ID == reg.ClientID {
				return true
			}
		}
		return false
	}
	if !listed() {
		t.Fatal("the registered client is not listed")
	}
	clock.Advance(91 * 24 * time.Hour)
	startServeOn(t, clock.Now, []string{"--database", dbURL, "--purge-dynamic-clients", "90d"}, nil)
	clocktest.Wait(t, "serve's purge of the unused dynamic client", func() bool { return !listed() })
	rows, err := svc.Audit(context.Background(), credentials.AuditQuery{ObjectKind: credentials.KindOAuthClient, ObjectID: reg.ClientID})
	if err != nil || len(rows) != 1 || rows[0].Actor != credentials.PurgeJobActor || rows[0].Action != credentials.ActionOAuthClientPurged ||
		rows[0].Details["last_used_at"] != "never" || rows[0].Details["unused_for"] != "90d" {
		t.Errorf("audit of the purge: %+v, %v", rows, err)
	}
}

func TestPurgeDynamicClientsSetting(t *testing.T) {
	t.Parallel()
	var d time.Duration
	set := purgeDynamicClientsSetter(&d)
	for in, want := range map[string]time.Duration{"off": 0, "90d": 90 * 24 * time.Hour, "1d": 24 * time.Hour, "48h": 48 * time.Hour} {
		d = -1
		if err := set(in); err != nil || d != want {
			t.Errorf("%q: %v, %v; want %v", in, d, err, want)
		}
	}
	for _, in := range []string{"", "2h", "0", "ninety", "-5d", "on"} {
		if err := set(in); err == nil {
			t.Errorf("%q was accepted", in)
		}
	}
}
