package api

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileStandalone compiles a schema on its own, as a client holding only
// the schema (not the document) would.
func compileStandalone(t *testing.T, s map[string]any) *jsonschema.Schema {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"$ref"`) {
		t.Fatalf("schema still holds a $ref: %.300s", raw)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("urn:test", v); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:test")
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return sch
}

func generic(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOperationSchemas(t *testing.T) {
	t.Parallel()
	c := contract(t)
	cases := []struct {
		method, path string
		body         func() map[string]any
		breakBody    func(map[string]any)
		params       []string
		statuses     []int
		scopes       []string
		optional     bool
	}{
		{method: "GET", path: "/v1/capabilities", statuses: []int{200}, scopes: []string{"service.capabilities.read"}, optional: true},
		{method: "POST", path: "/v1/booking-options", body: searchBody, breakBody: func(m map[string]any) { m["vertical_id"] = 7 },
			statuses: []int{200}, scopes: []string{"service.bookings.search"}, optional: true},
		{method: "POST", path: "/v1/bookings", body: confirmBody, breakBody: func(m map[string]any) { delete(m, "idempotency_key") },
			statuses: []int{200, 201}, scopes: []string{"service.bookings.confirm"}},
		{method: "GET", path: "/v1/bookings/{booking_id}", params: []string{"booking_id"}, statuses: []int{200},
			scopes: []string{"service.bookings.read"}},
		{method: "POST", path: "/v1/bookings/{booking_id}/cancel", body: cancelBody, breakBody: func(m map[string]any) { m["surprise"] = true },
			params: []string{"booking_id"}, statuses: []int{200}, scopes: []string{"service.bookings.cancel"}},
		{method: "POST", path: "/v1/bookings/{booking_id}/reschedule", body: rescheduleBody, breakBody: func(m map[string]any) { delete(m, "booking_option_id") },
			params: []string{"booking_id"}, statuses: []int{200}, scopes: []string{"service.bookings.reschedule"}},
		{method: "POST", path: "/v1/requests", body: createBody, breakBody: func(m map[string]any) { m["customer"] = "Greta" },
			statuses: []int{201}, scopes: []string{"service.requests.create"}},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			got, err := c.OperationSchemas(tc.method, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Scopes, tc.scopes) || got.CredentialOptional != tc.optional {
				t.Errorf("security = %v optional %v, want %v optional %v", got.Scopes, got.CredentialOptional, tc.scopes, tc.optional)
			}
			var params []string
			for name, s := range got.PathParams {
				params = append(params, name)
				compileStandalone(t, s)
				if got.PathParamDescriptions[name] == "" {
					t.Errorf("path parameter %s has no description", name)
				}
			}
			if !slices.Equal(params, tc.params) {
				t.Errorf("path parameters = %v, want %v", params, tc.params)
			}
			var statuses []int
			for status, s := range got.Responses {
				statuses = append(statuses, status)
				compileStandalone(t, s)
			}
			slices.Sort(statuses)
			if !slices.Equal(statuses, tc.statuses) {
				t.Errorf("success statuses = %v, want %v", statuses, tc.statuses)
			}
			// Every operation answers errors as the contract's Problem.
			if got.Problem == nil {
				t.Fatal("no Problem schema for the error responses")
			}
			problem := compileStandalone(t, got.Problem)
			problemBody := map[string]any{"type": "http://x/problems/consent_required", "title": "Consent required", "status": 400,
				"detail": "d", "instance": "/v1/bookings", "code": "consent_required", "ok": false, "booking_created": false,
				"api_request_id": "6f1c4f0e-7c37-4a53-9d2b-0c6d1f5f8a11", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
				"contract_version": "public_bookings_api_v1", "server_time": "2026-05-04T10:00:00Z"}
			if err := problem.Validate(generic(t, problemBody)); err != nil {
				t.Errorf("a Problem fails the error schema: %v", err)
			}
			problemBody["ok"] = true
			if err := problem.Validate(generic(t, problemBody)); err == nil {
				t.Error("a body with ok true passes the error schema")
			}
			if tc.body == nil {
				if got.Body != nil {
					t.Errorf("body schema = %v, want none", got.Body)
				}
				return
			}
			sch := compileStandalone(t, got.Body)
			valid := tc.body()
			if err := sch.Validate(generic(t, valid)); err != nil {
				t.Errorf("the valid body fails the standalone schema: %v", err)
			}
			broken := tc.body()
			tc.breakBody(broken)
			if err := sch.Validate(generic(t, broken)); err == nil {
				t.Error("the broken body passes the standalone schema")
			}
		})
	}
}

func TestOperationSchemasUnknownOperation(t *testing.T) {
	t.Parallel()
	if _, err := contract(t).OperationSchemas("PUT", "/v1/bookings"); err == nil {
		t.Fatal("OperationSchemas(PUT /v1/bookings) succeeded")
	}
}

// TestOperationSchemasAreTheCallers: the schemas are resolved from a tree
// decoded once per process, so a caller changing what it got must not
// change what the next caller gets (nor the JSON rendering).
func TestOperationSchemasAreTheCallers(t *testing.T) {
	t.Parallel()
	c := contract(t)
	const method, path = "POST", "/v1/bookings/{booking_id}/cancel"
	first, err := c.OperationSchemas(method, path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	rendering := c.JSON()
	// Change every level of what was returned.
	var spoil func(v any)
	spoil = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				spoil(e)
				if _, nested := e.(map[string]any); !nested {
					v[k] = "spoiled"
				}
			}
			v["x-spoiled"] = true
		case []any:
			for i, e := range v {
				spoil(e)
				v[i] = "spoiled"
			}
		}
	}
	spoil(first.Body)
	spoil(first.Problem)
	for _, s := range first.Responses {
		spoil(s)
	}
	for _, s := range first.PathParams {
		spoil(s)
	}
	second, err := c.OperationSchemas(method, path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(second); string(got) != string(want) {
		t.Errorf("a caller's change to its schemas reached the next caller:\n got %.300s\nwant %.300s", got, want)
	}
	if !slices.Equal(c.JSON(), rendering) {
		t.Error("a caller's change to its schemas reached the JSON rendering")
	}
}
