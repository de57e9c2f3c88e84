package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bokat/internal/provider"
	"bokat/internal/sqlstore"
)

func TestProviderInvite(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "bokat.db")
	prepareStore(t, dbURL, manyProviders(2))
	invite := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"provider", "invite"}, append(args, "--database", dbURL,
			"--base-url", "https://api.example.se")...), getenvFrom(nil), &out, io.Discard)
		return out.String(), err
	}
	out, err := invite("prv_load_000", "--email", "Agare@Example.se")
	if err != nil {
		t.Fatalf("invite: %v", err)
	}
	if !strings.HasPrefix(out, "pi_") || !strings.Contains(out, " invited as owner of prv_load_000 until ") ||
		!strings.HasSuffix(out, "; sign in at https://api.example.se/provider/sign-in\n") {
		t.Errorf("output %q", out)
	}
	if _, err := invite("prv_load_001", "--email", "montor@example.se", "--role", "staff"); err != nil {
		t.Errorf("invite staff: %v", err)
	}
	for name, args := range map[string][]string{
		"unknown provider": {"prv_nobody", "--email", "x@example.se"},
		"no address":       {"prv_load_000"},
		"bad address":      {"prv_load_000", "--email", "x@"},
		"bad role":         {"prv_load_000", "--email", "x@example.se", "--role", "admin"},
		"no provider":      {"--email", "x@example.se"},
	} {
		if _, err := invite(args...); err == nil {
			t.Errorf("%s: invite succeeded", name)
		}
	}

	// The invitation is sealed as serve seals it: the store opened with
	// the same secrets finds it by address.
	db, _, _, err := openSealedStore(context.Background(), commonConfig{Database: dbURL, Env: "development", LogLevel: "error"}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := sqlstore.Bind[provider.Tx](db)
	invs, err := st.OpenInvitations(context.Background(), "prv_load_000", time.Now())
	if err != nil || len(invs) != 1 || invs[0].Email != "agare@example.se" || invs[0].Role != provider.Owner ||
		invs[0].InvitedBy != provider.OperatorActor {
		t.Fatalf("invitations: %+v %v", invs, err)
	}
	var log bytes.Buffer
	if err := run(context.Background(), []string{"provider", "audit", "prv_load_000", "--database", dbURL}, getenvFrom(nil),
		&log, io.Discard); err != nil {
		t.Fatal(err)
	}
	fields := strings.Split(strings.TrimSpace(log.String()), "\t")
	if len(fields) != 6 || fields[1] != provider.OperatorActor || fields[2] != provider.ActionInvited ||
		fields[3] != "invitation" || fields[4] != invs[0].ID || fields[5] != `"role=owner"` {
		t.Errorf("audit: %q", log.String())
	}
	if err := run(context.Background(), []string{"provider", "audit", "prv_nobody", "--database", dbURL}, getenvFrom(nil),
		io.Discard, io.Discard); err == nil {
		t.Error("an unknown provider has an audit")
	}
}
