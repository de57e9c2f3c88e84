package apidoc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"bokat"
	"bokat/api"
	"bokat/internal/catalog"
)

func contract(t *testing.T) *api.Contract {
	t.Helper()
	c, err := api.Load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func set(t *testing.T) *Set {
	t.Helper()
	s, err := Of(contract(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// document is a contract given as its JSON.
type document struct{ json []byte }

func (d *document) JSON() []byte { return d.json }

// TestOfReadsAContractOnce: the Set of a contract is read once and shared;
// a contract that cannot be read keeps failing.
func TestOfReadsAContractOnce(t *testing.T) {
	t.Parallel()
	if a, b := set(t), set(t); a != b {
		t.Error("two calls on one contract read it twice")
	}
	broken := &document{json: []byte(`{"openapi":"3.1.0","info":{"title":"x"},"paths":{}}`)}
	for range 2 {
		if _, err := Of(broken); err == nil || !strings.Contains(err.Error(), "servers") {
			t.Fatalf("Of(a document without servers) = %v, want an error naming servers", err)
		}
	}
}

// TestOpenAPINamesTheServer: the served document is the contract with its
// servers naming the base URL, written as encoding/json writes it.
func TestOpenAPINamesTheServer(t *testing.T) {
	t.Parallel()
	got, err := set(t).OpenAPI("https://bokat.example")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(contract(t).JSON(), &want); err != nil {
		t.Fatal(err)
	}
	want["servers"] = json.RawMessage(`[{"description":"This server.","url":"https://bokat.example"}]`)
	raw, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, raw) {
		t.Errorf("OpenAPI() differs from the contract with its servers replaced:\n got %.300s\nwant %.300s", got, raw)
	}
}

// TestReferenceNamesTheServer: one page read from the contract renders for
// each base URL, naming it and no other.
func TestReferenceNamesTheServer(t *testing.T) {
	t.Parallel()
	s := set(t)
	for _, base := range []string{"https://a.example", "http://127.0.0.1:8080"} {
		page, err := s.Reference(base)
		if err != nil {
			t.Fatal(err)
		}
		text := string(page)
		for _, want := range []string{"<code>" + base + "</code>", `href="` + base + `/v1/openapi.json"`, `href="` + base + `/llms.txt"`,
			`id="schemas"`, "Bokat public booking API"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the page lacks %q", base, want)
			}
		}
		if other := map[bool]string{true: "https://a.example", false: "http://127.0.0.1:8080"}[base != "https://a.example"]; strings.Contains(text, other) {
			t.Errorf("%s: the page names %s", base, other)
		}
	}
}

// TestLLMsTextListsWhatIsServed: llms.txt lists the served operations the
// contract describes, in order, each with its credential, the deprecated
// ones last; it skips what the contract does not describe.
func TestLLMsTextListsWhatIsServed(t *testing.T) {
	t.Parallel()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	ops := []Operation{
		{Method: "POST", Pattern: "/api/public/bookings", Access: PartnerCredential, Scope: bokat.ScopeBookingsConfirm},
		{Method: "GET", Pattern: "/v1/bookings/{booking_id}", Access: Credential, Scope: bokat.ScopeBookingsRead},
		{Method: "GET", Pattern: "/terms/{service_id}"},
		{Method: "POST", Pattern: "/v1/booking-options"},
	}
	raw, err := set(t).LLMsText(cat, ops, "https://bokat.example")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	read := "- [GET /v1/bookings/{booking_id}](https://bokat.example/v1/openapi.json#/paths/~1v1~1bookings~1%7Bbooking_id%7D/get): "
	search := "- [POST /v1/booking-options](https://bokat.example/v1/openapi.json#/paths/~1v1~1booking-options/post): "
	legacy := "- [POST /api/public/bookings](https://bokat.example/v1/openapi.json#/paths/~1api~1public~1bookings/post): "
	i, j, k, optional := strings.Index(text, read), strings.Index(text, search), strings.Index(text, legacy), strings.Index(text, "\n## Optional\n")
	if i < 0 || j < 0 || k < 0 || !(i < j && j < optional && optional < k) {
		t.Fatalf("operations at %d, %d, %d (Optional at %d), want the two v1 ones in order, the deprecated one after Optional:\n%s",
			i, j, k, optional, text)
	}
	for _, want := range []string{"(credential with scope `service.bookings.read`)\n", "(no credential needed)\n",
		"(partner credential, scope `service.bookings.confirm`; deprecated)\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("llms.txt lacks %q", want)
		}
	}
	if strings.Contains(text, "/terms/") {
		t.Error("llms.txt lists a route the contract does not describe")
	}
}

// TestProblemPages: a problem type's page says its code, status and advice,
// escaped; the index lists every type by code, linking its page.
func TestProblemPages(t *testing.T) {
	t.Parallel()
	p := Problem{Code: bokat.CodeRateLimited, Status: 429, Title: "Rate limited", Advice: "Wait <then> retry."}
	var page bytes.Buffer
	if err := WriteProblemPage(&page, p, "https://bokat.example"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h1>Rate limited</h1>", "<code>rate_limited</code>", "<code>429</code>", "Wait &lt;then&gt; retry.",
		`href="https://bokat.example/problems"`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page lacks %q:\n%s", want, page.String())
		}
	}
	var index bytes.Buffer
	ps := []Problem{p, {Code: bokat.CodeInternalError, Status: 500, Title: "Internal error"}}
	if err := WriteProblemIndex(&index, ps, "https://bokat.example"); err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, part := range strings.Split(index.String(), `<a href="`)[1:] {
		links = append(links, part[:strings.Index(part, `"`)])
	}
	if want := []string{"https://bokat.example/problems/internal_error", "https://bokat.example/problems/rate_limited"}; !reflect.DeepEqual(links, want) {
		t.Errorf("index links %v, want %v", links, want)
	}
}
