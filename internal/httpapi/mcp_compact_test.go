package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"bokat/internal/schedule"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkCompactText checks the text of a search answer against its
// structuredContent (which the caller validated against the outputSchema):
// every member but the options is there unchanged — the truth flags, the
// window with its not_understood words, next_available, the fallback —,
// and every option, rebuilt from its row, its provider and the service,
// is the option of structuredContent without its scope and with its terms
// cut to version and url; no scope or terms section is in the text.
func checkCompactText(t testing.TB, name string, text []byte, content map[string]any) {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal(text, &got); err != nil {
		t.Fatalf("%s: the compact text is not JSON: %v", name, err)
	}
	for k, v := range content {
		if k != "options" && k != "tax_reduction_texts" && !reflect.DeepEqual(got[k], v) {
			t.Errorf("%s: compact text %s = %v, want %v", name, k, got[k], v)
		}
	}
	want := content["options"].([]any)
	rows, _ := got["options"].([]any)
	if len(rows) != len(want) {
		t.Fatalf("%s: compact text has %d options, want %d", name, len(rows), len(want))
	}
	if cols := fmt.Sprint(got["option_columns"]); cols != "[booking_option_id provider_id start_at]" {
		t.Fatalf("%s: option_columns %s", name, cols)
	}
	providers, _ := got["providers"].(map[string]any)
	service, _ := got["service"].(map[string]any)
	for i, raw := range want {
		w := maps.Clone(raw.(map[string]any))
		delete(w, "scope")
		// The slot's label (a wording of start_at and end_at) is left to
		// structuredContent.
		ws := maps.Clone(w["slot"].(map[string]any))
		delete(ws, "label")
		w["slot"] = ws
		wt := w["terms"].(map[string]any)
		w["terms"] = map[string]any{"version": wt["version"], "url": wt["url"]}

		row, _ := rows[i].([]any)
		if len(row) != 3 {
			t.Fatalf("%s: option row %v", name, rows[i])
		}
		p, _ := providers[row[1].(string)].(map[string]any)
		provider := maps.Clone(p)
		delete(provider, "price")
		delete(provider, "job_minutes")
		delete(provider, "tax_reduction_estimate")
		provider["id"] = row[1]
		svc := maps.Clone(service)
		delete(svc, "terms_version")
		delete(svc, "terms_url")
		start, err := time.Parse(time.RFC3339, fmt.Sprint(row[2]))
		minutes, _ := p["job_minutes"].(float64)
		if err != nil || minutes <= 0 {
			t.Fatalf("%s: option row %v, provider %v", name, row, p)
		}
		end := start.Add(time.Duration(minutes) * time.Minute).In(schedule.Stockholm()).Format(time.RFC3339)
		rebuilt := map[string]any{
			"booking_option_id": row[0], "expires_at": got["expires_at"], "provider": provider, "service": svc,
			"slot":  map[string]any{"start_at": row[2], "end_at": end},
			"price": p["price"], "terms": map[string]any{"version": service["terms_version"], "url": service["terms_url"]},
		}
		if fig, ok := p["tax_reduction_estimate"].(map[string]any); ok {
			// The text names the estimate's conditions by id; their words
			// are in structuredContent.
			estimate := maps.Clone(fig)
			texts, _ := got["tax_reduction_texts"].(map[string]any)
			maps.Copy(estimate, texts)
			rebuilt["tax_reduction_estimate"] = estimate
			we := maps.Clone(w["tax_reduction_estimate"].(map[string]any))
			var ids []any
			for _, c := range we["conditions"].([]any) {
				ids = append(ids, c.(map[string]any)["id"])
			}
			delete(we, "conditions")
			we["condition_ids"] = ids
			w["tax_reduction_estimate"] = we
		}
		if !reflect.DeepEqual(rebuilt, w) {
			t.Errorf("%s: option %d rebuilt from the text\n%v\nwant\n%v", name, i, rebuilt, w)
		}
	}
	for _, leaked := range []string{`"body_sv"`, `"included_sv"`, `"sections"`} {
		if strings.Contains(string(text), leaked) {
			t.Errorf("%s: the compact text carries %s", name, leaked)
		}
	}
	if !strings.Contains(string(text), "structuredContent") {
		t.Errorf("%s: the compact text does not say where the full body is", name)
	}
}

// TestMCPSearchTextIsCompact measures the text content of search answers
// against the bodies they stand for: a search (6 options: the demo supply
// has two providers per job and postcode, three options each) and a
// booking's reschedule options (10 options of one provider). The text of
// ten options is under 8 KB; the figures are logged.
func TestMCPSearchTextIsCompact(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	b := e.confirm(t, e.options(t, faucetSearch())[0], "k-compact")
	timing := map[string]any{"preferred_time_text": "inom två veckor när lönen kommit"}
	calls := []struct {
		tool    string
		args    map[string]any
		options int
	}{
		{"search_booking_options", with(faucetSearch(), func(m map[string]any) { m["timing"] = timing }), 6},
		{"search_reschedule_options", map[string]any{"booking_id": b["id"], "timing": timing}, 10},
	}
	for _, version := range mcpEras {
		s := e.mcpConnect(t, version, e.token)
		for _, c := range calls {
			content := s.call(c.tool, c.args).success(t, version+" "+c.tool)
			if n := len(content["options"].([]any)); n != c.options {
				t.Fatalf("%s %s: %d options, want %d to measure", version, c.tool, n, c.options)
			}
			if nu, _ := content["requested_time_window"].(map[string]any)["not_understood"].([]any); len(nu) == 0 {
				t.Errorf("%s %s: no not_understood words to carry: %v", version, c.tool, content["requested_time_window"])
			}
			res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*sdk.TextContent).Text
			full := mustJSON(t, res.StructuredContent)
			t.Logf("%s %s, %d options: text %d bytes (%d per option), structuredContent %d bytes (%d per option)",
				version, c.tool, c.options, len(text), len(text)/c.options, len(full), len(full)/c.options)
			if c.options == 10 && len(text) >= 8<<10 {
				t.Errorf("%s %s: the text of 10 options is %d bytes, want under 8 KB", version, c.tool, len(text))
			}
		}
	}
}

// TestMCPSearchTextOfFourPlumbersIsUnder8000Bytes checks the largest
// compact text a search gives for one job — four plumbers with ROT
// estimates, 10 options — against 8,000 bytes: the option ids (bo2) are at
// most 200 bytes each, which is what brings it under.
func TestMCPSearchTextOfFourPlumbersIsUnder8000Bytes(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	e.withSupply(fourPlumbers)
	timing := map[string]any{"preferred_time_text": "inom två veckor när lönen kommit"}
	args := with(faucetSearch(), func(m map[string]any) { m["timing"] = timing })
	s := e.mcpConnect(t, mcpEras[0], e.token)
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "search_booking_options", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %v", err, res)
	}
	options := res.StructuredContent.(map[string]any)["options"].([]any)
	if len(options) != 10 {
		t.Fatalf("%d options, want 10 to measure", len(options))
	}
	for _, o := range options {
		o := o.(map[string]any)
		if id, _ := o["booking_option_id"].(string); !strings.HasPrefix(id, "bo2.") || len(id) > 200 {
			t.Errorf("option id %q (%d bytes): want bo2, at most 200 bytes", id, len(id))
		}
		if o["tax_reduction_estimate"] == nil {
			t.Errorf("option of %v has no ROT estimate to carry", o["provider"])
		}
	}
	if text := res.Content[0].(*sdk.TextContent).Text; len(text) >= 8000 {
		t.Errorf("the text of 10 options of four plumbers is %d bytes, want under 8,000", len(text))
	} else {
		t.Logf("the text of 10 options of four plumbers: %d bytes; an option id: %d bytes", len(text), len(options[0].(map[string]any)["booking_option_id"].(string)))
	}
}

// fourPlumbers is a supply of four plumbers in 113 45, each stating its
// labour share: a search of them fills its 10 options (3 per provider) and
// every provider carries a ROT estimate, the largest compact text a
// search gives for one job.
const fourPlumbers = `version: 1
providers:
  - {id: prv_vvs_a, name: Rörfixarna Stockholm AB, city: Stockholm, rating_label: "4,8 av 5 (212 omdömen)", email: a@example.se, postcodes: ["113"], hours: {weekdays: ["08:00-17:00"]}, services: [{service_id: vvs_install_faucet_standard, price_sek: 1890, labour_percent: 80}]}
  - {id: prv_vvs_b, name: Söders VVS & Bad AB, city: Stockholm, rating_label: "4,6 av 5 (97 omdömen)", email: b@example.se, postcodes: ["113"], hours: {weekdays: ["08:00-17:00"]}, services: [{service_id: vvs_install_faucet_standard, price_sek: 1990, labour_percent: 75}]}
  - {id: prv_vvs_c, name: Vasastadens Rör & Värme AB, city: Stockholm, rating_label: "4,7 av 5 (143 omdömen)", email: c@example.se, postcodes: ["113"], hours: {weekdays: ["08:00-17:00"]}, services: [{service_id: vvs_install_faucet_standard, price_sek: 1850, labour_percent: 85}]}
  - {id: prv_vvs_d, name: Kungsholmens VVS-service AB, city: Stockholm, rating_label: "4,5 av 5 (61 omdömen)", email: d@example.se, postcodes: ["113"], hours: {weekdays: ["08:00-17:00"]}, services: [{service_id: vvs_install_faucet_standard, price_sek: 2100, labour_percent: 80}]}
`

// BenchmarkMCPSearchText reports the bytes of the text content and of
// structuredContent (the text before the compact form) of the search
// answers a model gets: the demo search (two providers, 6 options), a
// search of four plumbers with ROT estimates (10 options) and a booking's
// reschedule options (one provider, 10 options). The figures are the
// metrics; run with -benchtime 1x.
func BenchmarkMCPSearchText(b *testing.B) {
	timing := map[string]any{"preferred_time_text": "inom två veckor när lönen kommit"}
	search := with(faucetSearch(), func(m map[string]any) { m["timing"] = timing })
	demo := sqliteEnv(b).withDemoSupply()
	booked := demo.confirm(b, demo.options(b, faucetSearch())[0], "k-bench")
	four := sqliteEnv(b)
	four.withSupply(fourPlumbers)
	for _, c := range []struct {
		name    string
		e       *testEnv
		tool    string
		args    map[string]any
		options int
	}{
		{"search/demo", demo, "search_booking_options", search, 6},
		{"search/four-plumbers-rot", four, "search_booking_options", search, 10},
		{"reschedule-options/one-provider", demo, "search_reschedule_options", map[string]any{"booking_id": booked["id"], "timing": timing}, 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := c.e.mcpConnect(b, mcpEras[0], c.e.token)
			var text, full int
			for b.Loop() {
				res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %v", c.tool, err, res)
				}
				if n := len(res.StructuredContent.(map[string]any)["options"].([]any)); n != c.options {
					b.Fatalf("%s: %d options, want %d to measure", c.tool, n, c.options)
				}
				text, full = len(res.Content[0].(*sdk.TextContent).Text), len(mustJSON(b, res.StructuredContent))
			}
			b.ReportMetric(float64(text), "text-bytes")
			b.ReportMetric(float64(full), "structured-bytes")
			b.ReportMetric(float64(text)/float64(c.options), "text-bytes/option")
		})
	}
}
