package apidoc

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"bokat"
	"bokat/internal/catalog"
)

// llms.txt (https://llmstxt.org): a Markdown page for language models,
// built from the same sources as the API itself, so it cannot drift from
// them: the contract document (title, summary, the description with its
// flow and truth flags, every operation's summary), the operations the
// server serves (credential and scope of each) and the catalog's
// capabilities (the rules for models, required fields, scope of service
// and verticals).

// Operation is an operation a server serves, as llms.txt lists it.
type Operation struct {
	Method, Pattern string
	Access          Access
	// Scope is the scope a credential needs (Access Credential or
	// PartnerCredential).
	Scope bokat.Scope
}

// Access is the credential an operation needs.
type Access int

const (
	// NoCredential: anyone may call it.
	NoCredential Access = iota
	// Credential: any form of credential with the operation's scope.
	Credential
	// PartnerCredential: only a partner credential (the deprecated paths).
	PartnerCredential
)

// openAPIOutline is the part of the OpenAPI document llms.txt reads.
type openAPIOutline struct {
	Info struct {
		Title       string `json:"title"`
		Summary     string `json:"summary"`
		Description string `json:"description"`
	} `json:"info"`
	Paths map[string]map[string]json.RawMessage `json:"paths"`
}

// readOperations reads the outline of every operation of oa.
func readOperations(oa *openAPIOutline) (map[string]map[string]operationOutline, error) {
	out := make(map[string]map[string]operationOutline, len(oa.Paths))
	for path, item := range oa.Paths {
		out[path] = make(map[string]operationOutline)
		for _, method := range []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"} {
			raw, ok := item[method]
			if !ok {
				continue
			}
			var op operationOutline
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("apidoc: %s %s: %w", strings.ToUpper(method), path, err)
			}
			out[path][method] = op
		}
	}
	return out, nil
}

type operationOutline struct {
	OperationID string `json:"operationId"`
	Summary     string `json:"summary"`
	Deprecated  bool   `json:"deprecated"`
}

type agentContract struct {
	ConsentBeforePII bool     `json:"consent_required_before_pii_submission"`
	RequiredFields   []string `json:"required_fields"`
	ForbiddenClaims  []string `json:"forbidden_claims"`
	SafeNextStep     string   `json:"safe_next_step"`
}

type bookingLifecycle struct {
	Search            string         `json:"search"`
	Confirm           string         `json:"confirm"`
	Fallback          string         `json:"fallback"`
	AvailabilityTruth string         `json:"availability_truth"`
	ConfirmedContract map[string]any `json:"confirmed_contract"`
}

type geographicScope struct {
	Note string `json:"note"`
}

// LLMsText renders llms.txt for a server at baseURL serving ops (in the
// order given) with the catalog cat.
func (s *Set) LLMsText(cat *catalog.Catalog, ops []Operation, baseURL string) ([]byte, error) {
	in, err := s.llmsInputs(cat)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	s.writeLLMsAbout(&b, baseURL)
	in.writeTruthAndRules(&b)
	writeLLMsVerticals(&b, cat)
	deprecated := s.writeLLMsOperations(&b, ops, baseURL)
	writeLLMsOptional(&b, baseURL)
	b.WriteString(strings.Join(deprecated, ""))
	return []byte(b.String()), nil
}

// llmsInputs are the capability texts llms.txt states.
type llmsInputs struct {
	ac  agentContract
	bl  bookingLifecycle
	geo geographicScope
}

// llmsInputs reads the capability texts of cat; it fails when one does not
// decode, or the title, the forbidden claims or the availability truth is
// missing.
func (s *Set) llmsInputs(cat *catalog.Catalog) (llmsInputs, error) {
	var in llmsInputs
	if err := json.Unmarshal(cat.Capability.AgentContract, &in.ac); err != nil {
		return in, fmt.Errorf("llms.txt: reading the agent contract: %w", err)
	}
	if err := json.Unmarshal(cat.Capability.BookingLifecycle, &in.bl); err != nil {
		return in, fmt.Errorf("llms.txt: reading the booking lifecycle: %w", err)
	}
	if err := json.Unmarshal(cat.Capability.GeographicScope, &in.geo); err != nil {
		return in, fmt.Errorf("llms.txt: reading the geographic scope: %w", err)
	}
	if s.outline.Info.Title == "" || len(in.ac.ForbiddenClaims) == 0 || in.bl.AvailabilityTruth == "" {
		return in, fmt.Errorf("llms.txt: the OpenAPI title, the forbidden claims or the availability truth is missing")
	}
	return in, nil
}

// writeLLMsAbout writes the title, the summary, the base URL and the
// document's own description (the flow, the truth flags, errors,
// idempotency, limits), its headings moved one level down, under ours.
func (s *Set) writeLLMsAbout(b *strings.Builder, baseURL string) {
	oa := &s.outline
	fmt.Fprintf(b, "# %s\n\n", oa.Info.Title)
	if oa.Info.Summary != "" {
		fmt.Fprintf(b, "> %s\n\n", oneLine(oa.Info.Summary))
	}
	fmt.Fprintf(b, "Base URL: %s. The OpenAPI 3.1 document at %s/v1/openapi.json is the contract; this page is generated from it and from %s/v1/capabilities.\n\n",
		baseURL, baseURL, baseURL)
	b.WriteString("## About the API\n\n")
	for _, line := range strings.Split(strings.TrimSpace(oa.Info.Description), "\n") {
		if strings.HasPrefix(line, "#") {
			line = "#" + line
		}
		b.WriteString(line + "\n")
	}
}

// writeTruthAndRules writes the truth flags and the rules for models.
func (in llmsInputs) writeTruthAndRules(b *strings.Builder) {
	ac, bl := in.ac, in.bl
	b.WriteString("\n## Truth flags\n\n")
	fmt.Fprintf(b, "%s\n\n", bl.AvailabilityTruth)
	b.WriteString("A booking exists only when the confirmation response has:\n\n")
	for _, k := range slices.Sorted(maps.Keys(bl.ConfirmedContract)) {
		v, _ := json.Marshal(bl.ConfirmedContract[k])
		fmt.Fprintf(b, "- `%s`: `%s`\n", k, v)
	}

	b.WriteString("\n## Rules for models\n\n")
	for _, c := range ac.ForbiddenClaims {
		fmt.Fprintf(b, "- %s\n", c)
	}
	if ac.ConsentBeforePII {
		b.WriteString("- Ask for the user's consent before sending any personal data (`user_consent_confirmed` must be true).\n")
	}
	if in.geo.Note != "" {
		fmt.Fprintf(b, "- %s\n", in.geo.Note)
	}
	fmt.Fprintf(b, "\nSafe next step: %s\n\n", ac.SafeNextStep)
	fmt.Fprintf(b, "Search: %s\n\nConfirm: %s\n\nNo option: %s\n\n", bl.Search, bl.Confirm, bl.Fallback)
	b.WriteString("Fields a follow-up request needs:\n\n")
	for _, f := range ac.RequiredFields {
		fmt.Fprintf(b, "- %s\n", f)
	}
}

// writeLLMsVerticals lists the supported verticals, then the others.
func writeLLMsVerticals(b *strings.Builder, cat *catalog.Catalog) {
	b.WriteString("\n## Verticals\n\n")
	for _, v := range cat.Verticals {
		fmt.Fprintf(b, "- `%s` (%s, %s): %s\n", v.ID, v.LabelEN, v.AgentStatus, oneLine(v.AgentSummary))
	}
	for _, u := range cat.UnavailableVerticals {
		fmt.Fprintf(b, "- `%s` (%s, %s): %s\n", u.ID, u.LabelEN, u.AgentStatus, oneLine(u.SafeNextStep))
	}
}

// writeLLMsOperations lists the served operations the contract describes,
// in order; it returns the lines of the deprecated ones, which go last.
func (s *Set) writeLLMsOperations(b *strings.Builder, ops []Operation, baseURL string) (deprecated []string) {
	b.WriteString("\n## Operations\n\n")
	for _, o := range ops {
		op, ok := s.operations[o.Pattern][strings.ToLower(o.Method)]
		if !ok {
			continue // served beside the contract (pages, feeds)
		}
		line := fmt.Sprintf("- [%s %s](%s/v1/openapi.json#/paths/%s/%s): %s (%s)\n", o.Method, o.Pattern, baseURL,
			pointerFragment(o.Pattern), strings.ToLower(o.Method), op.Summary, credentialText(o))
		if op.Deprecated {
			deprecated = append(deprecated, line)
			continue
		}
		b.WriteString(line)
	}
	return deprecated
}

// writeLLMsOptional lists the other documents of the server.
func writeLLMsOptional(b *strings.Builder, baseURL string) {
	b.WriteString("\n## Optional\n\n")
	fmt.Fprintf(b, "- [API reference](%s/docs): the OpenAPI document as one HTML page\n", baseURL)
	fmt.Fprintf(b, "- [OpenAPI document](%s/v1/openapi.json): the full contract, JSON\n", baseURL)
	fmt.Fprintf(b, "- [Capabilities](%s/v1/capabilities): verticals, job types, auth and the agent contract, JSON\n", baseURL)
	fmt.Fprintf(b, "- [Error codes](%s/problems): every Problem code with its status and meaning\n", baseURL)
	fmt.Fprintf(b, "- [MCP server](%s/mcp): the same operations as MCP tools (Streamable HTTP)\n", baseURL)
}

// credentialText says what credential an operation needs.
func credentialText(o Operation) string {
	switch o.Access {
	case PartnerCredential:
		return "partner credential, scope `" + string(o.Scope) + "`; deprecated"
	case Credential:
		return "credential with scope `" + string(o.Scope) + "`"
	default:
		return "no credential needed"
	}
}

// pointerFragment returns a path as a JSON Pointer token in a URI fragment
// (RFC 6901): "~" and "/" escaped, then braces percent-encoded.
func pointerFragment(path string) string {
	return strings.NewReplacer("~", "~0", "/", "~1", "{", "%7B", "}", "%7D").Replace(path)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
