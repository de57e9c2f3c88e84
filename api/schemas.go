package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// OperationSchemas are the schemas of one operation as self-contained JSON
// Schemas (2020-12): every $ref of the document resolved in place, so that
// a client of another surface (the MCP server's tool descriptions) can use
// them without the document.
type OperationSchemas struct {
	// Body is the schema of the application/json request body; nil when the
	// operation takes none.
	Body map[string]any
	// PathParams are the schemas of the path parameters, by name.
	PathParams map[string]map[string]any
	// PathParamDescriptions are the descriptions of the path parameters.
	PathParamDescriptions map[string]string
	// Responses are the schemas of the application/json bodies of the
	// success (2xx) responses, by status.
	Responses map[int]map[string]any
	// Problem is the schema of the operation's error bodies (the
	// application/problem+json of its 4xx, 5xx and default responses): one
	// schema, or anyOf the distinct ones. Nil when it declares none.
	Problem map[string]any
	// Scopes are the OAuth scopes the operation's security requires.
	Scopes []string
	// CredentialOptional is true when the security admits callers without
	// a credential (an empty requirement).
	CredentialOptional bool
}

// OperationSchemas returns the schemas of the operation at method and path
// (the path template, e.g. "/v1/bookings/{booking_id}/cancel"). It fails
// when the document has no such operation or a reference cannot be
// resolved. The schemas are the caller's: fresh copies on every call.
func (c *Contract) OperationSchemas(method, path string) (OperationSchemas, error) {
	doc := c.tree // resolve copies what it reads: doc is never modified
	item, _ := lookup(doc, "/paths/"+escapePointer(path)).(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	if op == nil {
		return OperationSchemas{}, fmt.Errorf("%w: %s %s", ErrNoOperation, method, path)
	}
	o := operationReader{r: resolver{doc: doc}, method: method, path: path, item: item, op: op,
		out: OperationSchemas{PathParams: map[string]map[string]any{}, PathParamDescriptions: map[string]string{},
			Responses: map[int]map[string]any{}}}
	for _, step := range []func() error{o.pathParams, o.requestBody, o.responses} {
		if err := step(); err != nil {
			return OperationSchemas{}, err
		}
	}
	security, ok := op["security"].([]any)
	if !ok {
		security, _ = doc["security"].([]any)
	}
	o.out.Scopes, o.out.CredentialOptional = securityScopes(security)
	return o.out, nil
}

// operationReader reads the schemas of one operation (op, under the path
// item item) into out, step by step.
type operationReader struct {
	r            resolver
	method, path string
	item, op     map[string]any
	out          OperationSchemas
}

// pathParams reads the path parameters of the path item and the operation.
func (o *operationReader) pathParams() error {
	params, _ := o.item["parameters"].([]any)
	opParams, _ := o.op["parameters"].([]any)
	for _, raw := range append(slices.Clone(params), opParams...) {
		p, err := o.r.object(raw)
		if err != nil {
			return err
		}
		if p["in"] != "path" {
			continue
		}
		name, _ := p["name"].(string)
		s, err := o.r.object(p["schema"])
		if err != nil {
			return fmt.Errorf("api: %s %s parameter %s: %w", o.method, o.path, name, err)
		}
		o.out.PathParams[name] = s
		if d, ok := p["description"].(string); ok {
			o.out.PathParamDescriptions[name] = d
		}
	}
	return nil
}

// requestBody reads the schema of the application/json request body.
func (o *operationReader) requestBody() error {
	rb, ok := o.op["requestBody"]
	if !ok {
		return nil
	}
	body, err := o.r.object(rb)
	if err != nil {
		return err
	}
	if s := lookup(body, "/content/application~1json/schema"); s != nil {
		if o.out.Body, err = o.r.object(s); err != nil {
			return fmt.Errorf("api: %s %s request body: %w", o.method, o.path, err)
		}
	}
	return nil
}

// responses reads the application/json schema of each success response
// and the distinct problem schemas of the error responses, in status order.
func (o *operationReader) responses() error {
	responses, _ := o.op["responses"].(map[string]any)
	var problems []any
	for _, status := range slices.Sorted(maps.Keys(responses)) {
		raw := responses[status]
		code, err := strconv.Atoi(status)
		if err != nil || code < 200 || code > 299 {
			if status != "default" && (err != nil || code < 400) {
				continue
			}
			p, err := o.problem(status, raw)
			if err != nil {
				return err
			}
			if p != nil && !slices.ContainsFunc(problems, func(q any) bool { return sameJSON(q, p) }) {
				problems = append(problems, p)
			}
			continue
		}
		resp, err := o.r.object(raw)
		if err != nil {
			return err
		}
		if s := lookup(resp, "/content/application~1json/schema"); s != nil {
			if o.out.Responses[code], err = o.r.object(s); err != nil {
				return fmt.Errorf("api: %s %s response %d: %w", o.method, o.path, code, err)
			}
		}
	}
	switch len(problems) {
	case 0:
	case 1:
		o.out.Problem = problems[0].(map[string]any)
	default:
		o.out.Problem = map[string]any{"type": "object", "anyOf": problems}
	}
	return nil
}

// problem is the application/problem+json schema of the error response
// raw of the status; nil when it declares none.
func (o *operationReader) problem(status string, raw any) (map[string]any, error) {
	resp, err := o.r.object(raw)
	if err != nil {
		return nil, err
	}
	ps := lookup(resp, "/content/application~1problem+json/schema")
	if ps == nil {
		return nil, nil
	}
	p, err := o.r.object(ps)
	if err != nil {
		return nil, fmt.Errorf("api: %s %s response %s: %w", o.method, o.path, status, err)
	}
	return p, nil
}

// securityScopes are the scopes the security requirements name, in order,
// and whether one of them is empty (a caller without a credential).
func securityScopes(security []any) (scopes []string, credentialOptional bool) {
	for _, req := range security {
		m, _ := req.(map[string]any)
		if len(m) == 0 {
			credentialOptional = true
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			names, _ := m[name].([]any)
			for _, s := range names {
				if s, ok := s.(string); ok && !slices.Contains(scopes, s) {
					scopes = append(scopes, s)
				}
			}
		}
	}
	return scopes, credentialOptional
}

// resolver inlines the references of a document.
type resolver struct {
	doc map[string]any
	// stack holds the references being resolved, to refuse cycles.
	stack []string
}

// object resolves v, which must be a JSON object, into a fresh copy without
// references.
func (r *resolver) object(v any) (map[string]any, error) {
	out, err := r.resolve(v)
	if err != nil {
		return nil, err
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, got %T", out)
	}
	return m, nil
}

// resolve returns a deep copy of v with every local $ref replaced by its
// target; keywords beside a $ref (a description, say) override the
// target's.
func (r *resolver) resolve(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		if ref, ok := v["$ref"].(string); ok {
			if !strings.HasPrefix(ref, "#/") {
				return nil, fmt.Errorf("reference %q is not local to the document", ref)
			}
			if slices.Contains(r.stack, ref) {
				return nil, fmt.Errorf("reference %q is recursive: it cannot be inlined", ref)
			}
			target := lookup(r.doc, strings.TrimPrefix(ref, "#"))
			if target == nil {
				return nil, fmt.Errorf("reference %q names nothing", ref)
			}
			r.stack = append(r.stack, ref)
			resolved, err := r.resolve(target)
			r.stack = r.stack[:len(r.stack)-1]
			if err != nil {
				return nil, err
			}
			m, ok := resolved.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("reference %q does not name an object", ref)
			}
			maps.Copy(out, m)
		}
		for k, e := range v {
			if k == "$ref" {
				continue
			}
			e, err := r.resolve(e)
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			e, err := r.resolve(e)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	default:
		return v, nil
	}
}

// lookup returns the value at a JSON pointer ("/a/b~1c") in v, or nil.
func lookup(v any, pointer string) any {
	if pointer == "" {
		return v
	}
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch cur := v.(type) {
		case map[string]any:
			v = cur[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur) {
				return nil
			}
			v = cur[i]
		default:
			return nil
		}
		if v == nil {
			return nil
		}
	}
	return v
}

// sameJSON reports whether two resolved schemas are the same document.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
