package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// option is a search option as the REST body carries it.
func option(id, provider, service string, amount int, start, end string) map[string]any {
	return map[string]any{
		"booking_option_id": id, "expires_at": "2026-11-24T09:15:00+01:00",
		"provider": map[string]any{"id": provider, "name": "Firma " + provider},
		"service":  map[string]any{"service_id": service, "vertical_id": "vvs", "job_type_id": "install_faucet", "label_sv": "Blandare"},
		"slot":     map[string]any{"start_at": start, "end_at": end, "label": "tisdag"},
		"price":    map[string]any{"amount_sek": amount, "currency": "SEK"},
		"scope":    map[string]any{"included_sv": []string{"Montering"}},
		"terms": map[string]any{"version": "v1:" + service, "url": "https://x/terms/" + service,
			"sections": []any{map[string]any{"id": "a", "title_sv": "A", "body_sv": "Lång text"}}},
	}
}

func TestCompactTextFallsBackToTheBody(t *testing.T) {
	t.Parallel()
	const t9, t10, t11 = "2026-11-24T09:00:00+01:00", "2026-11-24T10:00:00+01:00", "2026-11-24T11:00:00+01:00"
	tests := []struct {
		name    string
		body    map[string]any
		compact bool
	}{
		{"no options member", map[string]any{"ok": true, "booking_created": true}, false},
		{"no option", map[string]any{"ok": true, "options": []any{}}, false},
		{"one provider, one price", map[string]any{"options": []any{
			option("bo1.a", "p1", "s1", 100, t9, t10), option("bo1.b", "p1", "s1", 100, t10, t11)}}, true},
		{"two services", map[string]any{"options": []any{
			option("bo1.a", "p1", "s1", 100, t9, t10), option("bo1.b", "p2", "s2", 100, t10, t11)}}, false},
		{"one provider at two prices", map[string]any{"options": []any{
			option("bo1.a", "p1", "s1", 100, t9, t10), option("bo1.b", "p1", "s1", 200, t10, t11)}}, false},
		{"one provider, two job lengths", map[string]any{"options": []any{
			option("bo1.a", "p1", "s1", 100, t9, t10), option("bo1.b", "p1", "s1", 100, t9, t11)}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, err := json.Marshal(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			got := compactText(body)
			if !tc.compact {
				if got != string(body) {
					t.Errorf("text %s, want the body %s", got, body)
				}
				return
			}
			if strings.Contains(got, "body_sv") || strings.Contains(got, "included_sv") || !strings.Contains(got, `"bo1.a"`) ||
				!strings.Contains(got, `"job_minutes":60`) || !strings.Contains(got, `"terms_version":"v1:s1"`) {
				t.Errorf("compact text %s", got)
			}
		})
	}
}
