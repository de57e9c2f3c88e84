package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

type createdClient struct {
	ClientID     string  `json:"client_id"`
	ClientSecret *string `json:"client_secret"`
}

func oauthClientCreate(t *testing.T, dbURL string, args ...string) createdClient {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"oauth-client", "create", "--database", dbURL}, args...), getenvFrom(nil), &stdout, &stderr)
	if err != nil {
		t.Fatalf("oauth-client create: %v (stderr: %s)", err, stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	var out createdClient
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("stdout is not one JSON object {client_id, client_secret?}: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatal("stdout holds more than one JSON value")
	}
	return out
}

func TestOAuthClientCreatePrintsTheSecretOnceAndStoresAHash(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "bokat.db")
	dbURL := "sqlite:" + dbPath
	conf := oauthClientCreate(t, dbURL, "--name", "Hemhjälpen AI", "--redirect-uri", "https://app.example.se/cb",
		"--redirect-uri", "http://127.0.0.1:8123/cb", "--scopes", "service.bookings.read,service.bookings.confirm")
	if !regexp.MustCompile(`^oc_[0-9a-f]{32}$`).MatchString(conf.ClientID) || conf.ClientSecret == nil ||
		!regexp.MustCompile(`^bks_[A-Za-z0-9_-]{43}$`).MatchString(*conf.ClientSecret) {
		t.Fatalf("got %+v, want oc_… and a bks_ secret of 256 bits", conf)
	}
	public := oauthClientCreate(t, dbURL, "--name", "Mobilappen", "--redirect-uri", "http://[::1]/cb", "--public")
	if public.ClientSecret != nil {
		t.Fatalf("a public client got a secret: %+v", public)
	}

	db, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var name, uris, scopes string
	var hash sql.NullString
	if err := db.QueryRow(`SELECT name, redirect_uris, scopes, secret_hash FROM oauth_clients WHERE id = $1`, conf.ClientID).
		Scan(&name, &uris, &scopes, &hash); err != nil {
		t.Fatal(err)
	}
	if name != "Hemhjälpen AI" || uris != "https://app.example.se/cb http://127.0.0.1:8123/cb" ||
		scopes != "service.bookings.read service.bookings.confirm" || !hash.Valid || len(hash.String) != 64 ||
		strings.Contains(hash.String, (*conf.ClientSecret)[4:]) {
		t.Fatalf("stored %q %q %q %v", name, uris, scopes, hash)
	}
	if err := db.QueryRow(`SELECT scopes, secret_hash FROM oauth_clients WHERE id = $1`, public.ClientID).Scan(&scopes, &hash); err != nil || hash.Valid ||
		scopes != "service.capabilities.read service.bookings.search service.bookings.confirm service.bookings.read service.bookings.cancel service.bookings.reschedule service.requests.create service.webhooks.manage" {
		t.Fatalf("public client stored with scopes %q, secret hash %v (err %v); want every scope and no hash", scopes, hash, err)
	}
}

func TestOAuthClientCreateRejectsBadArguments(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	cases := map[string][]string{
		"no name":            {"--redirect-uri", "https://a.example/cb"},
		"no redirect URI":    {"--name", "A"},
		"http off loopback":  {"--name", "A", "--redirect-uri", "http://a.example/cb"},
		"fragment":           {"--name", "A", "--redirect-uri", "https://a.example/cb#x"},
		"private-use scheme": {"--name", "A", "--redirect-uri", "se.example.app:/cb"},
		"unknown scope":      {"--name", "A", "--redirect-uri", "https://a.example/cb", "--scopes", "service.everything"},
		"missing subcommand": nil,
		"unknown subcommand": {"delete"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			full := []string{"oauth-client", "create", "--database", dbURL}
			switch name {
			case "missing subcommand":
				full = []string{"oauth-client"}
			case "unknown subcommand":
				full = []string{"oauth-client", "delete"}
			default:
				full = append(full, args...)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), full, getenvFrom(nil), &stdout, &stderr)
			if err == nil || exitCode(err) != 2 {
				t.Fatalf("err = %v, want a usage error", err)
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

var (
	formRe   = regexp.MustCompile(`(?s)<form method="post" action="([^"]+)">(.*?)</form>`)
	hiddenRe = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// pageForm returns the hidden fields of the page's first form.
func pageForm(t *testing.T, body string) (action string, v url.Values) {
	t.Helper()
	m := formRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no form on the page:\n%s", body)
	}
	v = url.Values{}
	for _, h := range hiddenRe.FindAllStringSubmatch(m[2], -1) {
		v.Set(html.UnescapeString(h[1]), html.UnescapeString(h[2]))
	}
	return m[1], v
}

// devSignInCode returns the latest sign-in code `serve` echoed to its log
// (development only).
func devSignInCode(t *testing.T, logs string) string {
	t.Helper()
	code := ""
	for _, line := range strings.Split(logs, "\n") {
		var rec struct {
			Msg  string `json:"msg"`
			Code string `json:"code"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec.Msg, "development sign-in code") {
			code = rec.Code
		}
	}
	if code == "" {
		t.Fatalf("serve logged no development sign-in code:\n%s", logs)
	}
	return code
}

// TestServeWiresOAuth runs `bokat serve` and completes the delegated flow
// against it, reading the sign-in code from the development log: discovery,
// the pages, the token endpoint and the access-token verifier are wired.
func TestServeWiresOAuth(t *testing.T) {
	t.Parallel()
	dbURL := migratedSQLite(t)
	created := oauthClientCreate(t, dbURL, "--name", "Hemhjälpen AI", "--redirect-uri", "http://127.0.0.1:8123/cb", "--scopes", "all")
	baseURL, _, logs, stop := startServe(t, []string{"--database", dbURL}, nil)

	resp, err := http.Get(baseURL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil || meta["issuer"] != baseURL || meta["token_endpoint"] != baseURL+"/oauth/token" {
		t.Fatalf("authorization server metadata: %v %v", meta, err)
	}

	conf := &oauth2.Config{
		ClientID: created.ClientID, ClientSecret: *created.ClientSecret, RedirectURL: "http://127.0.0.1:8123/cb",
		Scopes:   []string{"service.bookings.read"},
		Endpoint: oauth2.Endpoint{AuthURL: meta["authorization_endpoint"].(string), TokenURL: meta["token_endpoint"].(string), AuthStyle: oauth2.AuthStyleInHeader},
	}
	verifier := oauth2.GenerateVerifier()
	jar, _ := cookiejar.New(nil)
	var final *url.URL
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), conf.RedirectURL) {
			final = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	page := func(resp *http.Response, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	body := page(browser.Get(conf.AuthCodeURL("cli", oauth2.S256ChallengeOption(verifier))))
	action, form := pageForm(t, body)
	form.Set("email", "cli@example.se")
	body = page(browser.PostForm(baseURL+action, form))
	action, form = pageForm(t, body)
	form.Set("code", devSignInCode(t, logs.String()))
	body = page(browser.PostForm(baseURL+action, form))
	action, form = pageForm(t, body)
	form.Set("decision", "approve")
	page(browser.PostForm(baseURL+action, form))
	if final == nil || final.Query().Get("code") == "" || final.Query().Get("iss") != baseURL {
		t.Fatalf("the flow ended at %v, want the client's redirect URI with a code", final)
	}
	tok, err := conf.Exchange(context.Background(), final.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	for token, want := range map[string]int{tok.AccessToken: http.StatusOK, "bka_" + strings.Repeat("A", 43): http.StatusUnauthorized} {
		req, _ := http.NewRequest("GET", baseURL+"/v1/capabilities", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("capabilities with %.8s…: %d, want %d", token, resp.StatusCode, want)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	if strings.Contains(logs.String(), tok.AccessToken) || strings.Contains(logs.String(), "cli@example.se") {
		t.Error("serve logged a token or the e-mail address")
	}
}
