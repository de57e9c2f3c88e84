package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestLLMsTextIsBuiltFromTheContractAndTheCapabilities: /llms.txt follows
// the llms.txt shape (title, summary, sections), names every v1 operation of
// the OpenAPI document with its summary and credential, and carries the
// truth flags and every rule for models from the capabilities, word for word.
func TestLLMsTextIsBuiltFromTheContractAndTheCapabilities(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	r := e.do(request{Method: "GET", Path: "/llms.txt", NoValidate: true})
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/markdown; charset=utf-8" {
		t.Fatalf("GET /llms.txt: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	text := string(r.Body)
	var doc struct {
		Info struct {
			Title   string `json:"title"`
			Summary string `json:"summary"`
		} `json:"info"`
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(e.contract.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "# "+doc.Info.Title+"\n\n> "+strings.Join(strings.Fields(doc.Info.Summary), " ")+"\n") {
		t.Errorf("llms.txt does not open with the document's title and summary:\n%.300s", text)
	}
	for _, h := range []string{"\n## Truth flags\n", "\n## Rules for models\n", "\n## Operations\n", "\n## Optional\n", "\n### Truth flags\n"} {
		if !strings.Contains(text, h) {
			t.Errorf("no %q section", strings.TrimSpace(h))
		}
	}
	ops := 0
	for path, methods := range doc.Paths {
		for method, raw := range methods {
			var op struct {
				Summary string `json:"summary"`
			}
			if json.Unmarshal(raw, &op) != nil || op.Summary == "" {
				continue
			}
			ops++
			want := fmt.Sprintf("- [%s %s](http://bokat.test/v1/openapi.json#/paths/%s/%s): %s (", strings.ToUpper(method), path,
				strings.NewReplacer("/", "~1", "{", "%7B", "}", "%7D").Replace(path), method, op.Summary)
			if !strings.Contains(text, want) {
				t.Errorf("no line for %s %s: want %q", method, path, want)
			}
		}
	}
	if ops < 12 {
		t.Fatalf("the document has %d operations, want at least 12", ops)
	}
	for _, want := range []string{
		"- [POST /v1/bookings](", "credential with scope `service.bookings.confirm`",
		"- [POST /v1/booking-options](", "no credential needed",
		"- `booking_created`: `true`", "- `booking_status`: `\"confirmed\"`",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("llms.txt lacks %q", want)
		}
	}
	var ac struct {
		RequiredFields  []string `json:"required_fields"`
		ForbiddenClaims []string `json:"forbidden_claims"`
		SafeNextStep    string   `json:"safe_next_step"`
	}
	if err := json.Unmarshal(e.srv.catalog.Capability.AgentContract, &ac); err != nil {
		t.Fatal(err)
	}
	for _, rule := range append(append([]string{ac.SafeNextStep}, ac.ForbiddenClaims...), ac.RequiredFields...) {
		if !strings.Contains(text, rule) {
			t.Errorf("llms.txt lacks the rule %q", rule)
		}
	}
	for _, v := range e.srv.catalog.Verticals {
		if !strings.Contains(text, "- `"+v.ID+"` (") {
			t.Errorf("llms.txt lacks the vertical %s", v.ID)
		}
	}
	for _, u := range e.srv.catalog.UnavailableVerticals {
		if !strings.Contains(text, "- `"+u.ID+"` (") || !strings.Contains(text, u.SafeNextStep) {
			t.Errorf("llms.txt lacks the unavailable vertical %s and its safe next step", u.ID)
		}
	}
	// Deprecated operations come last, under Optional.
	if i, j := strings.Index(text, "## Optional"), strings.Index(text, "[POST /api/public/bookings]"); j < i {
		t.Errorf("deprecated operations are listed before Optional (%d < %d)", j, i)
	}
}
