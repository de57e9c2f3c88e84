package httpapi

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeWalk runs the requests of the README's first walk whose
// bodies are written out (single-quoted JSON) and its GETs against a
// server with the demo supply, with the walk's token (a test-mode one when
// the walk creates it) where it sends $TOKEN: each must succeed, and the walk must set TOKEN before it
// uses it and avoid commands of one platform.
func TestReadmeWalk(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, walk, ok := strings.Cut(string(raw), "## A first walk with curl")
	if ok {
		walk, _, ok = strings.Cut(walk, "\n## ")
	}
	if !ok {
		t.Fatal("README has no walk section")
	}
	if set, use := strings.Index(walk, "TOKEN="), strings.Index(walk, "$TOKEN"); set < 0 || set > use {
		t.Errorf("the walk uses $TOKEN without setting it first")
	}
	if !strings.Contains(walk, "jq") || !strings.Contains(walk, "needs `curl` and [`jq`]") {
		t.Errorf("the walk does not say it needs jq")
	}
	if regexp.MustCompile(`(?m)^\s*(open|xdg-open|pbcopy) `).MatchString(walk) {
		t.Errorf("the walk runs a command of one platform")
	}

	e := sqliteEnv(t).withDemoSupply()
	// The walk's TOKEN: a test-mode partner token when the walk makes one
	// (as it tells a new user to), else serve --demo's development token.
	token := e.token
	if strings.Contains(walk, "partner create --mode test") {
		token = e.testPartner(t, "readme")
	}
	curl := regexp.MustCompile(`(?s)curl -s (?:-X (\w+) )?localhost:8080(\S+)((?: -H (?:'[^']*'|"[^"]*"))*)(?: -d '(\{.*?\n?\})'| (-d "))?`)
	posts, gets := 0, 0
	for _, m := range curl.FindAllStringSubmatch(walk, -1) {
		method, path, headers, body := m[1], m[2], m[3], m[4]
		if m[5] != "" {
			continue // a body the shell fills in (the confirmation)
		}
		req := request{Method: "GET", Path: path}
		if body != "" {
			if body == "{}" {
				continue // the walk's deliberate error
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(body), &v); err != nil {
				t.Errorf("%s: the body is not JSON: %v\n%s", path, err, body)
				continue
			}
			req.Method, req.Body = "POST", v
			posts++
		} else if method == "" {
			gets++
		} else {
			continue
		}
		if strings.Contains(headers, "$TOKEN") {
			req.Header = bearer(token)
		}
		req.NoValidate = !strings.HasPrefix(path, "/v1/")
		if r := e.do(req); r.Status >= 300 {
			t.Errorf("%s %s: %d %s", req.Method, path, r.Status, r.Body)
		}
	}
	if posts < 2 || gets < 4 {
		t.Errorf("found %d posts and %d gets in the walk; the pattern no longer reads it", posts, gets)
	}
}
