package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOperatorInviteAndConsoleOnItsOwnListener makes an operator on the
// command line, runs `bokat serve --admin-addr`, and signs the operator in
// to the console there with the code from the development log: the
// console is served on the admin listener only, and the API is not.
func TestOperatorInviteAndConsoleOnItsOwnListener(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "bokat.db")
	prepareStore(t, dbURL, manyProviders(1))
	invite := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"operator", "invite"}, append(args, "--database", dbURL)...),
			getenvFrom(nil), &out, io.Discard)
		return out.String(), err
	}
	out, err := invite("--email", "Drift@Bokat.example", "--console-url", "https://admin.example.se")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^op_[0-9a-f]{32} is an operator; sign in at https://admin.example.se/operator/sign-in\n$`).MatchString(out) {
		t.Errorf("output %q", out)
	}
	for name, args := range map[string][]string{
		"again":       {"--email", "drift@bokat.example"},
		"no address":  {},
		"bad address": {"--email", "drift@"},
	} {
		if _, err := invite(args...); err == nil {
			t.Errorf("%s: invite succeeded", name)
		}
	}

	baseURL, _, logs, stop := startServe(t, []string{"--database", dbURL, "--admin-addr", "127.0.0.1:0"}, nil)
	defer stop()
	adminURL := ""
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec struct{ Msg, URL string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "operator console listening" {
			adminURL = strings.TrimSuffix(rec.URL, "/operator/")
		}
	}
	if !strings.HasPrefix(adminURL, "http://127.0.0.1:") || adminURL == baseURL {
		t.Fatalf("admin listener %q (API on %s); logs:\n%s", adminURL, baseURL, logs.String())
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	fetch := func(method, target string, form url.Values) (*http.Response, string) {
		t.Helper()
		var resp *http.Response
		var err error
		if form == nil {
			resp, err = client.Get(target)
		} else {
			resp, err = client.PostForm(target, form)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	if resp, _ := fetch("GET", baseURL+"/operator/sign-in", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the console on the API's listener: %d", resp.StatusCode)
	}
	if resp, _ := fetch("GET", adminURL+"/v1/capabilities", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the API on the admin listener: %d", resp.StatusCode)
	}
	resp, body := fetch("GET", adminURL+"/operator/sign-in", nil)
	csrf := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || csrf == nil {
		t.Fatalf("sign-in page: %d\n%s", resp.StatusCode, body)
	}
	if resp, _ := fetch("POST", adminURL+"/operator/sign-in", url.Values{"csrf_token": {csrf[1]}, "email": {"drift@bokat.example"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("send code: %d", resp.StatusCode)
	}
	resp, _ = fetch("POST", adminURL+"/operator/sign-in/code", url.Values{"csrf_token": {csrf[1]}, "code": {devSignInCode(t, logs.String())}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/operator/" {
		t.Fatalf("enter code: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body := fetch("GET", adminURL+"/operator/audit", nil); resp.StatusCode != http.StatusOK ||
		!strings.Contains(body, "Inloggad som drift@bokat.example") || !strings.Contains(body, "operator.invited") ||
		!strings.Contains(body, "operator.signed_in") {
		t.Fatalf("audit page: %d\n%s", resp.StatusCode, body)
	}
	if strings.Contains(logs.String(), "drift@bokat.example") {
		t.Error("the server logged the operator's address")
	}
}
