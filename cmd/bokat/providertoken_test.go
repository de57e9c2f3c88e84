package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"bokat/internal/sqlstore"
)

func TestProviderTokenCreate(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	prepareStore(t, dbURL, manyProviders(1))
	create := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"provider", "token", "create"}, append(args, "--database", dbURL)...),
			getenvFrom(nil), &out, io.Discard)
		return out.String(), err
	}
	out, err := create("prv_load_000", "--scopes", "provider.bookings.read,provider.calendar.write", "--name", "Kassasystem")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	var got struct{ TokenID, ProviderID, Token string }
	if err := json.Unmarshal([]byte(out), &struct {
		TokenID    *string `json:"token_id"`
		ProviderID *string `json:"provider_id"`
		Token      *string `json:"token"`
	}{&got.TokenID, &got.ProviderID, &got.Token}); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if !strings.HasPrefix(got.TokenID, "pt_") || got.ProviderID != "prv_load_000" || !strings.HasPrefix(got.Token, "bkv_") {
		t.Errorf("output %q", out)
	}
	// The store keeps a keyed hash of the token, never the token.
	db, err := sql.Open("sqlite", "file:"+strings.TrimPrefix(dbURL, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var scopes, hash string
	if err := db.QueryRow(`SELECT scopes, token_hash FROM provider_tokens WHERE id = $1`, got.TokenID).Scan(&scopes, &hash); err != nil {
		t.Fatalf("the token is not stored: %v", err)
	}
	plain := sha256.Sum256([]byte(got.Token))
	if scopes != "provider.bookings.read provider.calendar.write" || len(hash) != 64 || strings.Contains(hash, got.Token[4:]) ||
		hash == hex.EncodeToString(plain[:]) {
		t.Errorf("stored scopes %q and token_hash %q: want the scopes and a keyed hash of the token", scopes, hash)
	}
	var clear int
	if err := db.QueryRow(`SELECT COUNT(*) FROM provider_tokens WHERE token_hash = $1 OR name = $1`, got.Token).Scan(&clear); err != nil || clear != 0 {
		t.Errorf("the token is stored in clear (%d rows, %v)", clear, err)
	}
	for name, args := range map[string][]string{
		"unknown provider": {"prv_nobody", "--scopes", "all"},
		"a partner scope":  {"prv_load_000", "--scopes", "service.bookings.read"},
		"no scopes":        {"prv_load_000"},
		"no provider":      {"--scopes", "all"},
		"two providers":    {"prv_load_000", "prv_load_001", "--scopes", "all"},
		"an unknown scope": {"prv_load_000", "--scopes", "provider.everything"},
	} {
		if _, err := create(args...); err == nil {
			t.Errorf("%s: create succeeded", name)
		}
	}
}

// A token made by the command works on serve's provider API, for its
// provider only.
func TestProviderTokenOnServe(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	baseURL, partnerToken, _, stop := startServe(t, []string{"--demo", "--database", dbURL}, nil)
	defer stop()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"provider", "token", "create", "prv_sthlm_vvs_1", "--scopes", "all",
		"--database", dbURL}, getenvFrom(nil), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var created struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(out.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	get := func(token string) (int, string) {
		req, _ := http.NewRequest("GET", baseURL+"/v1/provider/hours", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if status, body := get(created.Token); status != 200 || !strings.Contains(body, `"provider_id":"prv_sthlm_vvs_1"`) ||
		!strings.Contains(body, `"08:00-17:00"`) {
		t.Errorf("own hours: %d %s", status, body)
	}
	if status, body := get(partnerToken); status != 403 || !strings.Contains(body, "insufficient_scope") {
		t.Errorf("a partner token on the provider API: %d %s", status, body)
	}

	// List and revoke: the list shows no token; the revoked token is
	// refused from the next request on, and the revocation is audited.
	cli := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := run(context.Background(), append(args, "--database", dbURL), getenvFrom(nil), &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if strings.Contains(out.String(), created.Token) {
			t.Errorf("%v prints the token", args)
		}
		return out.String()
	}
	var listed []struct {
		TokenID    string   `json:"token_id"`
		ProviderID string   `json:"provider_id"`
		Scopes     []string `json:"scopes"`
		State      string   `json:"state"`
		RevokedAt  *string  `json:"revoked_at"`
	}
	if err := json.Unmarshal([]byte(cli("provider", "token", "list", "prv_sthlm_vvs_1", "--json")), &listed); err != nil ||
		len(listed) != 1 || listed[0].State != "active" || listed[0].ProviderID != "prv_sthlm_vvs_1" || len(listed[0].Scopes) != 4 {
		t.Fatalf("list: %+v %v", listed, err)
	}
	if table := cli("provider", "token", "list", "prv_sthlm_vvs_1"); !strings.Contains(table, listed[0].TokenID) || !strings.Contains(table, "LAST USED") {
		t.Errorf("list as a table:\n%s", table)
	}
	if out := cli("provider", "token", "revoke", listed[0].TokenID); !strings.Contains(out, "provider token "+listed[0].TokenID+" revoked at") {
		t.Errorf("revoke: %q", out)
	}
	if status, body := get(created.Token); status != 401 {
		t.Errorf("the revoked token: %d %s", status, body)
	}
	if err := json.Unmarshal([]byte(cli("provider", "token", "list", "prv_sthlm_vvs_1", "--json")), &listed); err != nil ||
		len(listed) != 1 || listed[0].State != "revoked" || listed[0].RevokedAt == nil {
		t.Errorf("list after the revocation: %+v %v", listed, err)
	}
	if err := run(context.Background(), []string{"provider", "token", "revoke", listed[0].TokenID, "--database", dbURL},
		getenvFrom(nil), io.Discard, io.Discard); err == nil {
		t.Error("revoking a revoked token succeeded")
	}
	db, err := sqlstore.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var actor, action string
	if err := db.R().QueryRowContext(context.Background(), `SELECT actor, action FROM operator_audit WHERE object_kind = 'provider_token'
		AND object_id = $1`, listed[0].TokenID).Scan(&actor, &action); err != nil || !strings.HasPrefix(actor, "cli:") ||
		action != "provider_token.revoked" {
		t.Errorf("audit of the revocation: %q %q %v", actor, action, err)
	}
}
