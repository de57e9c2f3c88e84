package api

import (
	"bytes"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// documentURL is the address under which the document is known to the JSON
// Schema compiler; its `#/components/...` references resolve inside it.
const documentURL = "urn:bokat:openapi.json"

// compiledOperation holds what request validation needs of one operation,
// compiled once at Load: a JSON Schema 2020-12 validator per parameter and
// for the JSON request body. Validating a request then costs microseconds
// instead of a schema compilation per call.
type compiledOperation struct {
	params []compiledParam
	// body is nil when the operation takes no request body.
	body *compiledBody
	// responses are keyed by declared status ("200", "4XX", "default").
	responses map[string]*compiledResponse
}

type compiledParam struct {
	name     string
	in       string // "path" or "header"
	required bool
	schema   *jsonschema.Schema
}

// validate checks body against b's schema, reporting into col.
func (b *compiledBody) validate(col *collector, body []byte) error {
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		col.addIssue("(body)", "must be valid JSON")
		return nil
	}
	if err := b.schema.Validate(value); err != nil {
		col.bodySchema = b.generic
		return col.addValidation("", b.fragment, err)
	}
	return nil
}

type compiledBody struct {
	required   bool
	mediaTypes []string // sorted; only application/json is declared today
	schema     *jsonschema.Schema
	// fragment is the JSON pointer of the body schema inside the document,
	// e.g. "/components/schemas/SearchRequest"; error locations are read
	// relative to it.
	fragment string
	// generic is the JSON form of the schema at fragment, which explains
	// failed if/then rules.
	generic any
}

// compileOperations compiles the parameter, request body and response
// schemas of every operation of doc, whose JSON rendering is rendered, and
// the body schema of every webhook, by event type.
func compileOperations(doc *openapi3.T, rendered []byte) (map[*openapi3.Operation]*compiledOperation, map[string]*compiledBody, error) {
	generic, err := jsonschema.UnmarshalJSON(bytes.NewReader(rendered))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the JSON rendering: %w", err)
	}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft2020)
	for name, validate := range formatValidators() {
		compiler.RegisterFormat(&jsonschema.Format{Name: name, Validate: func(v any) error {
			s, ok := v.(string)
			if !ok {
				return nil // formats constrain strings only
			}
			return validate(s)
		}})
	}
	compiler.AssertFormat()
	inlineSchemaRefs(generic)
	if err := compiler.AddResource(documentURL, generic); err != nil {
		return nil, nil, err
	}
	compile := func(fragment string) (*jsonschema.Schema, error) {
		return compiler.Compile(documentURL + "#" + fragment)
	}

	out := make(map[*openapi3.Operation]*compiledOperation)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			opPointer := "/paths/" + escapePointer(path) + "/" + strings.ToLower(method)
			co := &compiledOperation{}
			params, err := compileParams(item, op, opPointer, compile)
			if err != nil {
				return nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			co.params = params
			if co.responses, err = compileResponses(op, opPointer, generic, compile); err != nil {
				return nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				base := refOr(rb.Ref, opPointer+"/requestBody")
				body := &compiledBody{required: rb.Value.Required}
				for mt := range rb.Value.Content {
					body.mediaTypes = append(body.mediaTypes, mt)
				}
				slices.Sort(body.mediaTypes)
				if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					body.fragment = refOr(mt.Schema.Ref, base+"/content/application~1json/schema")
					body.generic = pointerValue(generic, body.fragment)
					if body.schema, err = compile(body.fragment); err != nil {
						return nil, nil, fmt.Errorf("%s %s: compiling the request body schema: %w", method, path, err)
					}
				}
				co.body = body
			}
			out[op] = co
		}
	}
	webhooks := make(map[string]*compiledBody)
	for name, item := range doc.Webhooks {
		if item == nil || item.Post == nil || item.Post.RequestBody == nil || item.Post.RequestBody.Value == nil {
			continue
		}
		rb := item.Post.RequestBody
		mt := rb.Value.Content.Get("application/json")
		if mt == nil || mt.Schema == nil {
			continue
		}
		base := refOr(rb.Ref, "/webhooks/"+escapePointer(name)+"/post/requestBody")
		fragment := refOr(mt.Schema.Ref, base+"/content/application~1json/schema")
		s, err := compile(fragment)
		if err != nil {
			return nil, nil, fmt.Errorf("webhook %s: compiling the body schema: %w", name, err)
		}
		webhooks[name] = &compiledBody{schema: s, fragment: fragment, generic: pointerValue(generic, fragment)}
	}
	return out, webhooks, nil
}

// refOr is the JSON pointer a $ref names, or pointer when ref is empty.
func refOr(ref, pointer string) string {
	if ref == "" {
		return pointer
	}
	return strings.TrimPrefix(ref, "#")
}

// compileParams compiles the path and header parameters of an operation,
// those of its path item included unless the operation overrides them.
func compileParams(item *openapi3.PathItem, op *openapi3.Operation, opPointer string,
	compile func(string) (*jsonschema.Schema, error)) ([]compiledParam, error) {
	var out []compiledParam
	add := func(ref *openapi3.ParameterRef, pointer string) error {
		p := ref.Value
		if p == nil || p.Schema == nil || (p.In != openapi3.ParameterInPath && p.In != openapi3.ParameterInHeader) {
			return nil
		}
		pointer = refOr(ref.Ref, pointer)
		schemaPointer := refOr(p.Schema.Ref, pointer+"/schema")
		s, err := compile(schemaPointer)
		if err != nil {
			return fmt.Errorf("compiling parameter %s: %w", p.Name, err)
		}
		out = append(out, compiledParam{name: p.Name, in: p.In, required: p.Required, schema: s})
		return nil
	}
	for i, ref := range item.Parameters {
		if ref.Value != nil && op.Parameters.GetByInAndName(ref.Value.In, ref.Value.Name) != nil {
			continue
		}
		if err := add(ref, fmt.Sprintf("%s/parameters/%d", strings.TrimSuffix(opPointer, "/"+lastToken(opPointer)), i)); err != nil {
			return nil, err
		}
	}
	for i, ref := range op.Parameters {
		if err := add(ref, fmt.Sprintf("%s/parameters/%d", opPointer, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// validate checks the parameters and body of a request against the
// compiled schemas, adding every finding to col.
func (co *compiledOperation) validate(col *collector, r *http.Request, pathParams map[string]string, body []byte) error {
	for _, p := range co.params {
		var (
			value string
			found bool
		)
		switch p.in {
		case openapi3.ParameterInPath:
			value, found = pathParams[p.name]
		case openapi3.ParameterInHeader:
			if vs := r.Header.Values(p.name); len(vs) > 0 {
				value, found = vs[0], true
			}
		}
		field := p.name + " (" + p.in + ")"
		if !found {
			if p.required {
				col.addIssue(field, "is required")
			}
			continue
		}
		if err := p.schema.Validate(value); err != nil {
			if err := col.addValidation(field, "", err); err != nil {
				return err
			}
		}
	}
	b := co.body
	if b == nil {
		return nil
	}
	if len(body) == 0 {
		if b.required {
			col.addIssue("(body)", "a JSON request body is required")
		}
		return nil
	}
	if !b.accepts(r.Header.Get("Content-Type")) {
		col.addIssue("Content-Type (header)", "must be "+strings.Join(b.mediaTypes, " or "))
		return nil
	}
	if b.schema == nil {
		return nil
	}
	return b.validate(col, body)
}

// accepts reports whether the Content-Type header names a declared media
// type, parameters (charset) aside.
func (b *compiledBody) accepts(contentType string) bool {
	if contentType == "application/json" { // what nearly every client sends
		return slices.Contains(b.mediaTypes, contentType)
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.TrimSpace(contentType)
	}
	return slices.Contains(b.mediaTypes, strings.ToLower(mt))
}

// escapePointer escapes a JSON pointer token.
func escapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func lastToken(pointer string) string {
	return pointer[strings.LastIndexByte(pointer, '/')+1:]
}

// compiledResponse holds what response validation needs of one declared
// response: its headers and a body validator per media type.
type compiledResponse struct {
	headers    []compiledHeader
	mediaTypes []string // sorted
	// bodies maps a media type to its schema; a media type without a
	// schema is in mediaTypes only.
	bodies map[string]*compiledBody
}

type compiledHeader struct {
	name     string
	required bool
	// typ is the schema's type ("integer", "string", ...): header values
	// are text, decoded to it before validation.
	typ    string
	schema *jsonschema.Schema
}

// compileResponses compiles the declared responses of an operation, keyed
// by their status ("200", "4XX", "default").
func compileResponses(op *openapi3.Operation, opPointer string, generic any,
	compile func(string) (*jsonschema.Schema, error)) (map[string]*compiledResponse, error) {
	out := make(map[string]*compiledResponse)
	if op.Responses == nil {
		return out, nil
	}
	for status, ref := range op.Responses.Map() {
		if ref == nil || ref.Value == nil {
			continue
		}
		base := refOr(ref.Ref, opPointer+"/responses/"+escapePointer(status))
		cr := &compiledResponse{bodies: make(map[string]*compiledBody)}
		for name, h := range ref.Value.Headers {
			if h == nil || h.Value == nil || strings.EqualFold(name, "Content-Type") {
				continue // OpenAPI ignores a declared Content-Type header
			}
			ch := compiledHeader{name: name, required: h.Value.Required}
			if h.Value.Schema != nil {
				pointer := refOr(h.Value.Schema.Ref, refOr(h.Ref, base+"/headers/"+escapePointer(name))+"/schema")
				if v := h.Value.Schema.Value; v != nil && v.Type != nil && len(*v.Type) == 1 {
					ch.typ = (*v.Type)[0]
				}
				s, err := compile(pointer)
				if err != nil {
					return nil, fmt.Errorf("response %s: compiling header %s: %w", status, name, err)
				}
				ch.schema = s
			}
			cr.headers = append(cr.headers, ch)
		}
		slices.SortFunc(cr.headers, func(a, b compiledHeader) int { return strings.Compare(a.name, b.name) })
		for mt, media := range ref.Value.Content {
			cr.mediaTypes = append(cr.mediaTypes, mt)
			if media == nil || media.Schema == nil {
				continue
			}
			fragment := refOr(media.Schema.Ref, base+"/content/"+escapePointer(mt)+"/schema")
			s, err := compile(fragment)
			if err != nil {
				return nil, fmt.Errorf("response %s: compiling the %s body schema: %w", status, mt, err)
			}
			cr.bodies[mt] = &compiledBody{schema: s, fragment: fragment, generic: pointerValue(generic, fragment)}
		}
		slices.Sort(cr.mediaTypes)
		out[status] = cr
	}
	return out, nil
}

// response returns the response declared for status: the exact code, then
// its range ("4XX"), then "default"; nil when none is.
func (co *compiledOperation) response(status int) *compiledResponse {
	code := strconv.Itoa(status)
	for _, key := range []string{code, code[:1] + "XX", "default"} {
		if r := co.responses[key]; r != nil {
			return r
		}
	}
	return nil
}

// validate checks a response against the declared one, adding every
// finding to col.
func (cr *compiledResponse) validate(col *collector, header http.Header, body []byte) error {
	for _, h := range cr.headers {
		vs := header.Values(h.name)
		field := h.name + " (header)"
		if len(vs) == 0 {
			if h.required {
				col.addIssue(field, "is required")
			}
			continue
		}
		if h.schema == nil {
			continue
		}
		if err := h.schema.Validate(headerValue(vs[0], h.typ)); err != nil {
			if err := col.addValidation(field, "", err); err != nil {
				return err
			}
		}
	}
	if len(cr.mediaTypes) == 0 {
		return nil
	}
	mt, _, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil {
		mt = strings.TrimSpace(header.Get("Content-Type"))
	}
	mt = strings.ToLower(mt)
	if !slices.Contains(cr.mediaTypes, mt) {
		col.addIssue("Content-Type (header)", "must be "+strings.Join(cr.mediaTypes, " or "))
		return nil
	}
	b := cr.bodies[mt]
	if b == nil {
		return nil
	}
	return b.validate(col, body)
}

// pointerValue returns the value at a JSON pointer of doc, or nil.
func pointerValue(doc any, pointer string) any {
	node := doc
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[unescapePointer(tok)]
	}
	return node
}

// headerValue decodes a header's text to the type its schema declares;
// text that does not decode is validated as it is, so the schema reports
// the wrong type.
func headerValue(s, typ string) any {
	switch typ {
	case "integer", "number":
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			if n, err := jsonschema.UnmarshalJSON(strings.NewReader(s)); err == nil {
				return n
			}
		}
	case "boolean":
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	}
	return s
}

// inlineSchemaRefs replaces, in the component schemas of doc (the document
// as compiled, not as served), every {"$ref": "#/components/schemas/X"}
// with nothing beside it by a copy of X, itself inlined; a reference back
// to a schema being inlined stays. Validation then walks one schema where
// it walked a reference and its target: the same rules, in a quarter fewer
// steps and allocations. Failures are reported at the same instance
// locations; what they name of the schema is where the rule was copied to.
func inlineSchemaRefs(doc any) {
	root, _ := doc.(map[string]any)
	components, _ := root["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	const prefix = "#/components/schemas/"
	var inline func(node any, open map[string]bool) any
	inline = func(node any, open map[string]bool) any {
		switch n := node.(type) {
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok && len(n) == 1 && strings.HasPrefix(ref, prefix) && !open[ref] {
				if target, ok := schemas[unescapePointer(strings.TrimPrefix(ref, prefix))]; ok {
					open[ref] = true
					defer delete(open, ref)
					return inline(cloneJSON(target), open)
				}
			}
			for k, v := range n {
				n[k] = inline(v, open)
			}
		case []any:
			for i, v := range n {
				n[i] = inline(v, open)
			}
		}
		return node
	}
	inlined := make(map[string]any, len(schemas))
	for name, s := range schemas {
		inlined[name] = inline(cloneJSON(s), map[string]bool{prefix + escapePointer(name): true})
	}
	maps.Copy(schemas, inlined)
}

// cloneJSON returns a deep copy of a decoded JSON value.
func cloneJSON(v any) any {
	switch n := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(n))
		for k, x := range n {
			m[k] = cloneJSON(x)
		}
		return m
	case []any:
		a := make([]any, len(n))
		for i, x := range n {
			a[i] = cloneJSON(x)
		}
		return a
	}
	return v
}
