package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerTransport adds a partner token to every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeAnswersMCP: the real program serves the MCP tools at /mcp: an
// SDK client searches and books with the development token.
func TestServeAnswersMCP(t *testing.T) {
	t.Parallel()
	baseURL, token, _, _ := startServe(t, []string{"--demo", "--database", migratedSQLite(t)}, nil)
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "bokat-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: baseURL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport(token)}}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 8 {
		t.Fatalf("tools/list: %v, %d tools", err, len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_booking_options", Arguments: map[string]any{
		"spec_version": "public_bookings_api_v1", "vertical_id": "vvs", "job_type_id": "install_faucet",
		"description": "Byta köksblandare, ny blandare finns på plats.",
		"location":    map[string]any{"country_code": "SE", "postcode": "113 45", "city": "Stockholm"},
		"timing":      map[string]any{"preferred_time_text": "inom två veckor"},
	}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %+v", err, res)
	}
	found := res.StructuredContent.(map[string]any)
	options, _ := found["options"].([]any)
	if len(options) == 0 {
		t.Fatalf("search found no options: %v", found)
	}
	o := options[0].(map[string]any)
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "confirm_booking", Arguments: map[string]any{
		"booking_option_id":      o["booking_option_id"],
		"customer":               map[string]any{"name": "Greta Gåsfot", "phone": "+46701234567", "email": "greta.gasfot@example.se"},
		"service_location":       map[string]any{"country_code": "SE", "address": "Drottninggatan 1", "postcode": "113 45"},
		"user_consent_confirmed": true, "booking_terms_accepted": true,
		"booking_terms_version":     o["terms"].(map[string]any)["version"],
		"booking_terms_accepted_at": time.Now().Format(time.RFC3339),
		"idempotency_key":           "e2e-mcp-1",
	}})
	if err != nil || res.IsError {
		t.Fatalf("confirm: %v %+v", err, res)
	}
	got := res.StructuredContent.(map[string]any)
	if got["booking_created"] != true {
		t.Fatalf("confirm: %v", got)
	}
	// The booked provider's other times, for a reschedule.
	booked := got["booking"].(map[string]any)
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_reschedule_options", Arguments: map[string]any{
		"booking_id": booked["id"], "timing": map[string]any{"preferred_time_text": "inom två veckor"},
	}})
	if err != nil || res.IsError {
		t.Fatalf("reschedule options: %v %+v", err, res)
	}
	moves, _ := res.StructuredContent.(map[string]any)["options"].([]any)
	if len(moves) == 0 {
		t.Fatal("no reschedule options")
	}
	for _, m := range moves {
		if p := m.(map[string]any)["provider"].(map[string]any)["id"]; p != booked["provider_id"] {
			t.Errorf("a reschedule option of %v, want %v", p, booked["provider_id"])
		}
	}
}
