// Package api holds Bokat's public contract: the OpenAPI 3.1 document
// openapi.yaml, embedded in the binary. It is the single source of request
// limits and shapes: the server validates incoming requests against it, the
// test suites validate responses against it, and it is served as JSON at
// GET /v1/openapi.json.
package api

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// document is the contract as written; it is only ever read.
//
//go:embed openapi.yaml
var document []byte

// Contract is the loaded, validated contract document. It is safe for
// concurrent use and never changes after Load.
type Contract struct {
	doc    *openapi3.T
	router routers.Router
	json   []byte
	// tree is json decoded once, read by OperationSchemas; never modified.
	tree       map[string]any
	operations []Operation
	// compiled holds, per operation, the request validators compiled once.
	compiled map[*openapi3.Operation]*compiledOperation
	// webhooks holds the compiled body schema of each webhook, by event type.
	webhooks map[string]*compiledBody
}

// Operation names one operation of the document.
type Operation struct {
	Method      string // "GET", "POST", ...
	Path        string // the path template, e.g. "/v1/bookings/{booking_id}"
	OperationID string
	Deprecated  bool
}

// Load parses the embedded document, validates it as OpenAPI 3.1 and
// prepares request routing, the JSON rendering and the validators. An
// error means the embedded document is broken: the program cannot serve
// its contract.
//
// The work is done once per process, on the first call: the document is
// embedded and the Contract immutable, so every later call returns the
// same Contract (or the same error). A test process builds hundreds of
// servers on it.
func Load() (*Contract, error) { return loaded() }

var loaded = sync.OnceValues(load)

func load() (*Contract, error) {
	ctx := context.Background()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("api: parsing the contract: %w", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("api: the contract is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("api: validating the contract: %w", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("api: routing the contract: %w", err)
	}
	rendered, err := yamlToJSON(document)
	if err != nil {
		return nil, fmt.Errorf("api: rendering the contract as JSON: %w", err)
	}

	c := &Contract{
		doc:    doc,
		router: router,
		json:   rendered,
	}
	if err := json.Unmarshal(rendered, &c.tree); err != nil {
		return nil, fmt.Errorf("api: reading the JSON rendering: %w", err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			c.operations = append(c.operations, Operation{
				Method:      method,
				Path:        path,
				OperationID: op.OperationID,
				Deprecated:  op.Deprecated,
			})
		}
	}
	if c.compiled, c.webhooks, err = compileOperations(doc, rendered); err != nil {
		return nil, fmt.Errorf("api: compiling the request schemas: %w", err)
	}
	slices.SortFunc(c.operations, func(a, b Operation) int {
		if n := strings.Compare(a.Path, b.Path); n != 0 {
			return n
		}
		return strings.Compare(a.Method, b.Method)
	})
	return c, nil
}

// JSON returns the document as JSON, as served at GET /v1/openapi.json. The
// caller owns the returned slice.
func (c *Contract) JSON() []byte {
	return bytes.Clone(c.json)
}

// Operations lists every operation of the document (webhooks excluded),
// sorted by path and method.
func (c *Contract) Operations() []Operation {
	return slices.Clone(c.operations)
}

// ValidateRequest checks an incoming request against the operation its
// method and path match: path and header parameters, content type and body.
// body is the already-read request body; r.Body is not read. Credentials
// and scopes are not checked: the server authenticates by itself.
//
// It returns nil when the request is valid, or every problem found, each as
// "<field path>: <what is wrong>", e.g. "customer.email: must be a valid
// e-mail address" or "(root): unknown field \"foo\"". The strings name fields
// and rules, never submitted values; at most 50 are returned, the last then
// saying how many more were found. The error is non-nil only when no
// operation matches (wrapping ErrNoOperation) or validation itself failed.
func (c *Contract) ValidateRequest(ctx context.Context, r *http.Request, body []byte) ([]string, error) {
	route, pathParams, err := c.findRoute(r)
	if err != nil {
		return nil, err
	}
	op := c.compiled[route.Operation]
	if op == nil {
		return nil, fmt.Errorf("api: %s %s has no compiled validators", r.Method, route.Path)
	}
	col := collector{}
	if err := op.validate(&col, r, pathParams, body); err != nil {
		return nil, fmt.Errorf("api: validating %s %s: %w", r.Method, route.Path, err)
	}
	if len(col.issues) == 0 {
		return nil, nil
	}
	return col.result(), nil
}

// ValidateResponse checks a response to r against the operation r matches:
// the status must be declared, declared headers present and valid, and the
// body must match the schema of its content type. It is meant for tests, so
// that a server drifting from the document fails them. The error lists
// every problem found.
func (c *Contract) ValidateResponse(_ context.Context, r *http.Request, status int, header http.Header, body []byte) error {
	route, _, err := c.findRoute(r)
	if err != nil {
		return err
	}
	op := c.compiled[route.Operation]
	if op == nil {
		return fmt.Errorf("api: %s %s has no compiled validators", r.Method, route.Path)
	}
	col := collector{}
	if resp := op.response(status); resp == nil {
		col.addIssue("(status)", strconv.Itoa(status)+" is not declared for this operation")
	} else if err := resp.validate(&col, header, body); err != nil {
		return fmt.Errorf("api: response %d to %s %s: %w", status, r.Method, route.Path, err)
	}
	if len(col.issues) == 0 {
		return nil
	}
	return fmt.Errorf("api: response %d to %s %s does not match the contract: %s",
		status, r.Method, route.Path, strings.Join(col.result(), "; "))
}

// ValidateWebhookEvent checks a webhook delivery body against the request
// body schema of the document's webhooks (the
// schema is written in the webhooks themselves, so that generators that
// keep only what paths reference still see it). It is meant for tests of
// the delivery code; the error lists every problem.
func (c *Contract) ValidateWebhookEvent(body []byte) error {
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("api: webhook event is not JSON: %w", err)
	}
	// Every webhook has the same body schema, whose type enum names the
	// event types: a body of an unknown type is checked against the first.
	eventType, _ := value.(map[string]any)["type"].(string)
	hook := c.webhooks[eventType]
	if hook == nil && len(c.webhooks) > 0 {
		hook = c.webhooks[slices.Sorted(maps.Keys(c.webhooks))[0]]
	}
	if hook == nil {
		return errors.New("api: the contract has no webhook with a JSON request body")
	}
	verr := hook.schema.Validate(value)
	if verr == nil {
		return nil
	}
	col := collector{bodySchema: hook.generic}
	if err := col.addValidation("", hook.fragment, verr); err != nil {
		return fmt.Errorf("api: validating a webhook event: %w", err)
	}
	return fmt.Errorf("api: webhook event does not match the contract: %s", strings.Join(col.result(), "; "))
}

// ErrNoOperation is wrapped by the errors of ValidateRequest and
// ValidateResponse when the document has no operation for the method and
// path of the request.
var ErrNoOperation = errors.New("api: no such operation in the contract")

func (c *Contract) findRoute(r *http.Request) (*routers.Route, map[string]string, error) {
	// The document's server is relative ("/"): match on the path alone, so
	// that a client-side request (whose URL carries scheme and host) finds
	// its operation as the server-side one does.
	if r.URL.Host != "" || r.URL.Scheme != "" {
		u := *r.URL
		u.Scheme, u.Host, u.User = "", "", nil
		r = r.Clone(r.Context())
		r.URL = &u
		r.Host = ""
	}
	route, pathParams, err := c.router.FindRoute(r)
	if err != nil {
		var rerr *routers.RouteError
		if errors.As(err, &rerr) {
			return nil, nil, fmt.Errorf("%w: %s %s (%s)", ErrNoOperation, r.Method, r.URL.Path, rerr.Reason)
		}
		return nil, nil, fmt.Errorf("api: routing %s %s: %w", r.Method, r.URL.Path, err)
	}
	return route, pathParams, nil
}

// yamlToJSON converts the YAML document to JSON, expanding anchors.
func yamlToJSON(doc []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	v, err := jsonCompatible(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// jsonCompatible rewrites the maps yaml.v3 may decode with non-string keys.
func jsonCompatible(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			e, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			v[k] = e
		}
		return v, nil
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("non-string key %v", k)
			}
			e, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			m[ks] = e
		}
		return m, nil
	case []any:
		for i, e := range v {
			e, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			v[i] = e
		}
		return v, nil
	default:
		return v, nil
	}
}
