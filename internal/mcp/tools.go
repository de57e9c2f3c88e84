package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"bokat"
	"bokat/api"
)

// toolSpec is what the MCP surface says about one operation of the
// contract; everything else (schemas, scopes) is read from the contract.
type toolSpec struct {
	name, title, description string
	// method and path name the contract operation the tool runs.
	method, path string
	// The hints, all set explicitly: a client reads a missing
	// destructiveHint or openWorldHint as true.
	readOnly, destructive, idempotent, openWorld bool
	// elicit asks the user through a consent form when the client declares
	// form elicitation (elicitation.go).
	elicit bool
}

// toolSpecs are the tools, in the order tools/list shows them.
var toolSpecs = []toolSpec{
	{
		name: "get_capabilities", title: "Get Bokat capabilities",
		description: "Lists the verticals and job types Bokat can book or route, the agent contract (rules for assistants), the " +
			"required fields and the geographic scope. Call it first when unsure whether a job is supported. Takes no arguments.",
		method: "GET", path: "/v1/capabilities",
		readOnly: true, idempotent: true,
	},
	{
		name: "search_booking_options", title: "Search bookable options",
		description: "Finds directly bookable options for a job: each has a provider, a concrete time slot, a fixed price, the " +
			"scope (what is included and excluded) and the terms, and expires at expires_at. Send postcodes only: never a street " +
			"address, name, e-mail or phone. Nothing is booked. When direct_booking_available is false, fallback names the " +
			"follow-up request instead. Show the user each option's provider, time, price, scope and terms as returned.",
		method: "POST", path: "/v1/booking-options",
		readOnly: true, idempotent: true,
	},
	{
		name: "confirm_booking", title: "Confirm a booking",
		description: "Books one option the user explicitly chose from search_booking_options. Only after the user said yes to " +
			"this provider, time, price, scope and terms: then set user_consent_confirmed and booking_terms_accepted true and " +
			"echo booking_terms_version from the option. Pass booking_option_id unchanged. idempotency_key: a new key per " +
			"booking; retry with the same key and body after a timeout (the replay answers idempotent_replay true, no second " +
			"booking). Only a result with booking_created true is a booking. Requires a credential with service.bookings.confirm.",
		method: "POST", path: "/v1/bookings",
		idempotent: true, openWorld: true, elicit: true,
	},
	{
		name: "get_booking_status", title: "Get a booking's status",
		description: "Reads the current status of a booking made with this credential, by booking.id or request_id from the " +
			"confirmation. found false means no such booking is visible to you: do not say one exists. Requires " +
			"service.bookings.read.",
		method: "GET", path: "/v1/bookings/{booking_id}",
		readOnly: true, idempotent: true,
	},
	{
		name: "cancel_booking", title: "Cancel a booking",
		description: "Cancels a confirmed booking and releases its time. Only after the user confirmed the cancellation in this " +
			"conversation: then set user_confirmation_confirmed true. idempotency_key: a new key per cancellation; retry with " +
			"the same key. Requires service.bookings.cancel.",
		method: "POST", path: "/v1/bookings/{booking_id}/cancel",
		destructive: true, idempotent: true, openWorld: true, elicit: true,
	},
	{
		name: "search_reschedule_options", title: "Search new times for a booking",
		description: "Finds the times a confirmed booking made with this credential can move to: its own provider and job " +
			"only (up to 10 options), in the window of timing.preferred_time_text. Nothing is changed or held. Let the user " +
			"choose one, then pass its booking_option_id to reschedule_booking. Requires service.bookings.reschedule.",
		method: "POST", path: "/v1/bookings/{booking_id}/booking-options",
		readOnly: true, idempotent: true,
	},
	{
		name: "reschedule_booking", title: "Move a booking to a new time",
		description: "Moves a confirmed booking to a new option of the same provider and service from a fresh " +
			"search_reschedule_options, releasing the old time. Only after the user chose the new time and accepted its terms: then " +
			"set user_confirmation_confirmed and booking_terms_accepted true and echo booking_terms_version. idempotency_key: " +
			"a new key per move; retry with the same key. Requires service.bookings.reschedule.",
		method: "POST", path: "/v1/bookings/{booking_id}/reschedule",
		destructive: true, idempotent: true, openWorld: true, elicit: true,
	},
	{
		name: "create_follow_up_request", title: "Create a provider follow-up request",
		description: "Sends the job to providers who may contact the customer, when no option can be booked directly. It is NOT " +
			"a booking: no provider, time or price is confirmed. Requires the customer's explicit consent to share their " +
			"contact details (user_consent_confirmed true). Send an idempotency_key and reuse it when retrying. Requires " +
			"service.requests.create.",
		method: "POST", path: "/v1/requests",
		idempotent: true, openWorld: true,
	},
}

// tool is a tool as served: its definition and what the authorization
// middleware needs to know. It is derived from the contract once (toolsOf)
// and shared by every server built on that contract: nothing changes it.
type tool struct {
	// def carries the schemas as JSON.
	def    *sdk.Tool
	method string
	path   string
	// pathParams are the argument names that fill the operation's path.
	pathParams []string
	// scope is the scope the operation requires; credentialOptional tells
	// whether it may be called without a credential at all.
	scope              bokat.Scope
	credentialOptional bool
	elicit             bool
}

// tools holds the tools derived from each contract New was given, as a
// func returning them (or the error): a process loads one contract and
// builds a server on it (a test process, hundreds).
var tools sync.Map // Contract -> func() ([]tool, error)

// toolsOf returns the tools derived from c, deriving them on the first call
// for c; later calls return the same tools, or the same error. c must be
// comparable (a pointer) and must not change.
func toolsOf(c Contract) ([]tool, error) {
	derive, ok := tools.Load(c)
	if !ok {
		derive, _ = tools.LoadOrStore(c, sync.OnceValues(func() ([]tool, error) { return buildTools(c) }))
	}
	return derive.(func() ([]tool, error))()
}

// buildTools derives every tool of toolSpecs from the contract c, and has
// the SDK check them.
func buildTools(c Contract) ([]tool, error) {
	out := make([]tool, 0, len(toolSpecs))
	for _, spec := range toolSpecs {
		t, err := buildTool(spec, c)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if err := checkWithSDK(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkWithSDK adds the tools to a scratch server, as every server adds
// them on its first MCP request: the SDK panics on a tool it refuses,
// which is then an error of New rather than a panic serving a request.
func checkWithSDK(ts []tool) (err error) {
	name := ""
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mcp: tool %s: the SDK refuses it: %v", name, r)
		}
	}()
	srv := newProtocolServer(slog.New(slog.DiscardHandler))
	for _, t := range ts {
		name = t.def.Name
		srv.AddTool(t.def, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, errors.New("a scratch server runs no tool")
		})
	}
	return nil
}

// buildTool derives a tool's schemas and scope from its contract operation.
func buildTool(spec toolSpec, c Contract) (tool, error) {
	ops, err := c.OperationSchemas(spec.method, spec.path)
	if err != nil {
		return tool{}, fmt.Errorf("mcp: tool %s: %w", spec.name, err)
	}
	if len(ops.Scopes) != 1 {
		return tool{}, fmt.Errorf("mcp: tool %s: the contract names scopes %v for %s %s, want exactly one", spec.name, ops.Scopes, spec.method, spec.path)
	}
	input := ops.Body
	if input == nil {
		input = map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}
	}
	if input["type"] != "object" {
		return tool{}, fmt.Errorf("mcp: tool %s: the request body of %s %s is not an object schema", spec.name, spec.method, spec.path)
	}
	params := slices.Sorted(maps.Keys(ops.PathParams))
	if len(params) > 0 {
		input = withPathParams(input, params, ops)
	}
	output, err := outputSchema(ops.Responses, ops.Problem)
	if err != nil {
		return tool{}, fmt.Errorf("mcp: tool %s: %w", spec.name, err)
	}
	// The SDK encodes a tool's schemas on every AddTool (for every tool of
	// every server) and every tools/list: JSON already encoded it copies.
	encodedInput, err := json.Marshal(input)
	if err != nil {
		return tool{}, fmt.Errorf("mcp: tool %s: input schema: %w", spec.name, err)
	}
	encodedOutput, err := json.Marshal(output)
	if err != nil {
		return tool{}, fmt.Errorf("mcp: tool %s: output schema: %w", spec.name, err)
	}
	openWorld, destructive := spec.openWorld, spec.destructive
	return tool{
		def: &sdk.Tool{
			Name: spec.name, Title: spec.title, Description: spec.description,
			InputSchema: json.RawMessage(encodedInput), OutputSchema: json.RawMessage(encodedOutput),
			Annotations: &sdk.ToolAnnotations{
				Title:           spec.title,
				ReadOnlyHint:    spec.readOnly,
				DestructiveHint: &destructive,
				IdempotentHint:  spec.idempotent,
				OpenWorldHint:   &openWorld,
			},
		},
		method: spec.method, path: spec.path, pathParams: params,
		scope: bokat.Scope(ops.Scopes[0]), credentialOptional: ops.CredentialOptional, elicit: spec.elicit,
	}, nil
}

// withPathParams returns the body schema with the path parameters added
// as required properties (the body schemas forbid unknown members, so
// they are merged in rather than combined with allOf).
func withPathParams(body map[string]any, params []string, ops api.OperationSchemas) map[string]any {
	out := maps.Clone(body)
	props := map[string]any{}
	if p, ok := body["properties"].(map[string]any); ok {
		props = maps.Clone(p)
	}
	var required []any
	if r, ok := body["required"].([]any); ok {
		required = slices.Clone(r)
	}
	for _, name := range params {
		s := maps.Clone(ops.PathParams[name])
		if d := ops.PathParamDescriptions[name]; d != "" {
			s["description"] = d
		}
		props[name] = s
		if !slices.Contains(required, any(name)) {
			required = append([]any{name}, required...)
		}
	}
	out["type"] = "object"
	out["properties"] = props
	out["required"] = required
	return out
}

// outputSchema is the schema of every structuredContent the tool returns:
// any of the success bodies (confirm answers 201, or 200 on a replay) and
// the Problem of an isError result. The Problem is part of it because
// clients validate structuredContent against the outputSchema whether or
// not the result is an error (the MCP Inspector does), and would otherwise
// replace the Problem with a schema error.
func outputSchema(responses map[int]map[string]any, problem map[string]any) (map[string]any, error) {
	if len(responses) == 0 {
		return nil, fmt.Errorf("the operation declares no JSON success response")
	}
	if problem == nil {
		return nil, fmt.Errorf("the operation declares no problem+json error response")
	}
	var anyOf []any
	for _, st := range slices.Sorted(maps.Keys(responses)) {
		anyOf = append(anyOf, responses[st])
	}
	return map[string]any{"type": "object", "anyOf": append(anyOf, problem)}, nil
}

// callTool runs a tool's operation through the backend and turns its
// answer into a tool result: a success body becomes structuredContent (and
// the same JSON as text); a Problem becomes an isError result carrying the
// Problem, never a protocol error. Every result is counted by its status.
func (s *Server) callTool(t tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res := s.runTool(ctx, t, req)
		status := 0
		if res.InputRequests == nil {
			status = res.status
		}
		s.observe(ctx, t.def.Name, status)
		return res.CallToolResult, nil
	}
}

// runTool answers one call of t.
func (s *Server) runTool(ctx context.Context, t tool, req *sdk.CallToolRequest) result {
	body, values, err := splitArguments(req.Params.Arguments, t.pathParams)
	if err != nil {
		return toolResult(s.backend.Problem(ctx, err))
	}
	op := Operation{Method: t.method, Path: t.path, PathValues: values, Body: body}
	if t.elicit && multiRoundTrip(req) && formElicitation(req.ClientCapabilities()) {
		return s.callElicited(ctx, t, req, op)
	}
	return answerResult(s.backend.Invoke(ctx, op))
}

// result is a tool result and the HTTP status of the answer it carries.
type result struct {
	*sdk.CallToolResult
	status int
}

// toolResult is the tool result of an operation's answer: the body as
// structuredContent, and as text the body itself, or for a search answer
// its compact text (compactText).
func toolResult(status int, resp []byte) result {
	text := string(resp)
	if status < 400 {
		text = compactText(resp)
	}
	return result{&sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: text}},
		StructuredContent: json.RawMessage(resp),
		IsError:           status >= 400,
	}, status}
}

// answerResult is the tool result of an answer that is no preview.
func answerResult(a Answer) result { return toolResult(a.Status, a.Body) }

// splitArguments separates the path parameters from the body members of a
// tool's arguments. Arguments that are not a JSON object are passed on as
// the body, for the operation's validation to refuse; a path parameter that
// is not a string is left in the body, where it is an unknown member.
func splitArguments(args json.RawMessage, pathParams []string) (body []byte, values map[string]string, err error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if len(pathParams) == 0 {
		return args, nil, nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(args, &members) != nil {
		return args, nil, nil
	}
	values = make(map[string]string)
	for _, name := range pathParams {
		var v string
		if raw, ok := members[name]; ok && json.Unmarshal(raw, &v) == nil {
			values[name] = v
			delete(members, name)
		}
	}
	body, err = json.Marshal(members)
	return body, values, err
}
