package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/web"
)

func TestProviderInvite(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
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

// TestServeWiresProviderPages runs `bokat serve` and signs an invited
// person in to the provider pages with the code from the development log:
// the pages, their style sheet and their sessions are wired into serve.
func TestServeWiresProviderPages(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	prepareStore(t, dbURL, manyProviders(1))
	if err := run(context.Background(), []string{"provider", "invite", "prv_load_000", "--email", "agare@example.se",
		"--database", dbURL}, getenvFrom(nil), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	baseURL, _, logs, stop := startServe(t, []string{"--database", dbURL}, nil)
	defer stop()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	fetch := func(method, path string, form url.Values) (*http.Response, string) {
		t.Helper()
		var resp *http.Response
		var err error
		if form == nil {
			resp, err = client.Get(baseURL + path)
		} else {
			resp, err = client.PostForm(baseURL+path, form)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	resp, body := fetch("GET", "/provider/sign-in", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") != web.ContentSecurityPolicy {
		t.Fatalf("sign-in page: %d %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	csrf := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(body)
	if csrf == nil {
		t.Fatalf("no form token:\n%s", body)
	}
	if resp, _ := fetch("GET", "/provider/static/site.css", nil); resp.StatusCode != http.StatusOK ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Errorf("style sheet: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, _ := fetch("POST", "/provider/sign-in", url.Values{"csrf_token": {csrf[1]}, "email": {"agare@example.se"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("send code: %d", resp.StatusCode)
	}
	resp, _ = fetch("POST", "/provider/sign-in/code", url.Values{"csrf_token": {csrf[1]}, "code": {devSignInCode(t, logs.String())}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/provider/" {
		t.Fatalf("enter code: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body := fetch("GET", "/provider/bookings", nil); resp.StatusCode != http.StatusOK ||
		!strings.Contains(body, "Inloggad som agare@example.se") {
		t.Fatalf("bookings: %d\n%s", resp.StatusCode, body)
	}
	if strings.Contains(logs.String(), "agare@example.se") {
		t.Error("the server logged the provider user's address")
	}
}
