package api

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"slices"
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
}

type compiledParam struct {
	name     string
	in       string // "path" or "header"
	required bool
	schema   *jsonschema.Schema
}

type compiledBody struct {
	required   bool
	mediaTypes []string // sorted; only application/json is declared today
	schema     *jsonschema.Schema
	// fragment is the JSON pointer of the body schema inside the document,
	// e.g. "/components/schemas/SearchRequest"; error locations are read
	// relative to it.
	fragment string
}

// compileOperations compiles the parameter and request body schemas of every
// operation of doc, whose JSON rendering is rendered.
func compileOperations(doc *openapi3.T, rendered []byte) (map[*openapi3.Operation]*compiledOperation, error) {
	generic, err := jsonschema.UnmarshalJSON(bytes.NewReader(rendered))
	if err != nil {
		return nil, fmt.Errorf("reading the JSON rendering: %w", err)
	}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft2020)
	for name, validate := range formatValidators() {
		compiler.RegisterFormat(&jsonschema.Format{Name: name, Validate: func(v any) error {
			s, ok := v.(string)
			if !ok {
				return nil // formats constrain strings only
			}
			return validate.Validate(s)
		}})
	}
	compiler.AssertFormat()
	if err := compiler.AddResource(documentURL, generic); err != nil {
		return nil, err
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
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			co.params = params
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				base := opPointer + "/requestBody"
				if rb.Ref != "" {
					base = strings.TrimPrefix(rb.Ref, "#")
				}
				body := &compiledBody{required: rb.Value.Required}
				for mt := range rb.Value.Content {
					body.mediaTypes = append(body.mediaTypes, mt)
				}
				slices.Sort(body.mediaTypes)
				if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					body.fragment = base + "/content/application~1json/schema"
					if mt.Schema.Ref != "" {
						body.fragment = strings.TrimPrefix(mt.Schema.Ref, "#")
					}
					if body.schema, err = compile(body.fragment); err != nil {
						return nil, fmt.Errorf("%s %s: compiling the request body schema: %w", method, path, err)
					}
				}
				co.body = body
			}
			out[op] = co
		}
	}
	return out, nil
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
		if ref.Ref != "" {
			pointer = strings.TrimPrefix(ref.Ref, "#")
		}
		schemaPointer := pointer + "/schema"
		if p.Schema.Ref != "" {
			schemaPointer = strings.TrimPrefix(p.Schema.Ref, "#")
		}
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
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		col.addIssue("(body)", "must be valid JSON")
		return nil
	}
	if err := b.schema.Validate(value); err != nil {
		return col.addValidation("", b.fragment, err)
	}
	return nil
}

// accepts reports whether the Content-Type header names a declared media
// type, parameters (charset) aside.
func (b *compiledBody) accepts(contentType string) bool {
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
