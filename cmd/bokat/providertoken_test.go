package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
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
}
