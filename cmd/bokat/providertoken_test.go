package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

func TestProviderTokenCreate(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "bokat.db")
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
