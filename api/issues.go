package api

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// maxIssues caps the issues of one request; the last one says how many
// more were found.
const maxIssues = 50

// maxNameLen caps a field name taken from the request (an unknown field).
const maxNameLen = 64

// collector turns validation errors into issue strings of the form
// "<field path>: <what is wrong>". Issues name fields and rules, never the
// submitted values.
type collector struct {
	operation  *openapi3.Operation
	bodySchema any // JSON form of the request body schema, if any
	// bodyFragment is the JSON pointer of the request body schema inside
	// the document when findings come from the compiled validators, whose
	// schema locations are document-absolute; "" when they are relative to
	// the body schema (kin-openapi's validator).
	bodyFragment string
	issues       []string
	unknown      error // an error that is not a validation finding
}

// failure is one node of a validation error tree, from either validator:
// kin-openapi's SchemaError or the JSON Schema validator's ValidationError.
type failure interface {
	// children are the failures grouped under this one.
	children() []failure
	// keyword is the failing keyword of the node ("anyOf", "required").
	keyword() string
	// pointer is the location of the failing value, as JSON pointer tokens.
	pointer() []string
	// kind is the JSON Schema error kind of the node, or nil when the node
	// comes from kin-openapi's own validator.
	kind() jsonschema.ErrorKind
	// schemaURL is the location of the failing schema, or "".
	schemaURL() string
}

// kinFailure adapts a kin-openapi SchemaError. Errors of its JSON Schema
// 2020-12 path wrap the ValidationError of each node.
type kinFailure struct{ se *openapi3.SchemaError }

func (f kinFailure) children() []failure {
	kids := childErrors(f.se)
	out := make([]failure, len(kids))
	for i, k := range kids {
		out[i] = kinFailure{k}
	}
	return out
}

func (f kinFailure) keyword() string   { return f.se.SchemaField }
func (f kinFailure) pointer() []string { return f.se.JSONPointer() }

func (f kinFailure) kind() jsonschema.ErrorKind {
	var verr *jsonschema.ValidationError
	if errors.As(f.se, &verr) {
		return verr.ErrorKind
	}
	return nil
}

func (f kinFailure) schemaURL() string {
	var verr *jsonschema.ValidationError
	if errors.As(f.se, &verr) {
		return verr.SchemaURL
	}
	return ""
}

// jsFailure adapts a ValidationError of the compiled validators. Like
// kin-openapi's conversion, a node that only wraps a single chain of causes
// (a schema, a group, a $ref) reports the keyword and location of its
// innermost cause.
type jsFailure struct{ v *jsonschema.ValidationError }

func (f jsFailure) children() []failure {
	out := make([]failure, len(f.v.Causes))
	for i, c := range f.v.Causes {
		out[i] = jsFailure{c}
	}
	return out
}

func (f jsFailure) failing() *jsonschema.ValidationError {
	v := f.v
	for len(v.Causes) == 1 && isWrapperKind(v.ErrorKind) {
		v = v.Causes[0]
	}
	return v
}

func (f jsFailure) keyword() string {
	if kw := f.failing().ErrorKind.KeywordPath(); len(kw) > 0 {
		return kw[len(kw)-1]
	}
	return ""
}

func (f jsFailure) pointer() []string          { return f.failing().InstanceLocation }
func (f jsFailure) kind() jsonschema.ErrorKind { return f.v.ErrorKind }
func (f jsFailure) schemaURL() string          { return f.v.SchemaURL }

// isWrapperKind reports whether k only groups the errors of its causes.
func isWrapperKind(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference:
		return true
	}
	return false
}

// addValidation records the findings of a compiled validator. prefix names a
// parameter ("" for the body); fragment is the document location of the
// body schema.
func (c *collector) addValidation(prefix, fragment string, err error) error {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return err
	}
	c.bodyFragment = fragment
	c.addFailure(prefix, jsFailure{verr})
	return nil
}

// result returns the issues sorted, without duplicates, at most maxIssues.
func (c *collector) result() []string {
	slices.Sort(c.issues)
	issues := slices.Compact(c.issues)
	if len(issues) > maxIssues {
		more := len(issues) - (maxIssues - 1)
		issues = append(issues[:maxIssues-1], fmt.Sprintf("(root): %d more issues not shown", more))
	}
	return issues
}

func (c *collector) addIssue(field, msg string) {
	c.issues = append(c.issues, field+": "+msg)
}

// add records the findings of an error of openapi3filter or openapi3.
// Anything else is kept in c.unknown.
func (c *collector) add(err error) {
	if me, ok := err.(openapi3.MultiError); ok {
		for _, e := range me {
			c.add(e)
		}
		return
	}
	var (
		rqe  *openapi3filter.RequestError
		rse  *openapi3filter.ResponseError
		se   *openapi3.SchemaError
		sec  *openapi3filter.SecurityRequirementsError
		perr *openapi3filter.ParseError
	)
	switch {
	case errors.As(err, &rqe):
		c.addRequestError(rqe)
	case errors.As(err, &rse):
		c.addResponseError(rse)
	case errors.As(err, &sec):
		// Security is the server's own business; the options disable it.
	case errors.As(err, &se):
		c.addFailure("", kinFailure{se})
	case errors.As(err, &perr):
		c.addIssue("(body)", "must be valid JSON")
	default:
		c.unknown = errors.Join(c.unknown, err)
	}
}

// isMulti reports whether err itself (not a wrapped error) is a MultiError.
func isMulti(err error) bool {
	_, ok := err.(openapi3.MultiError)
	return ok
}

func (c *collector) addRequestError(e *openapi3filter.RequestError) {
	field := "(body)"
	prefix := ""
	if p := e.Parameter; p != nil {
		field = fmt.Sprintf("%s (%s)", p.Name, p.In)
		prefix = field
	}
	var (
		se   *openapi3.SchemaError
		perr *openapi3filter.ParseError
	)
	switch {
	case e.Err == nil && strings.HasPrefix(e.Reason, "header Content-Type"):
		c.addIssue("Content-Type (header)", "must be "+c.requestMediaTypes())
	case errors.Is(e.Err, openapi3filter.ErrInvalidRequired):
		if e.Parameter != nil {
			c.addIssue(field, "is required")
		} else {
			c.addIssue(field, "a JSON request body is required")
		}
	case errors.Is(e.Err, openapi3filter.ErrInvalidEmptyValue):
		c.addIssue(field, "must not be empty")
	case isMulti(e.Err) || errors.As(e.Err, &se):
		c.addSchemaErrors(prefix, e.Err)
	case errors.As(e.Err, &perr):
		if e.Parameter != nil {
			c.addIssue(field, "cannot be parsed")
		} else {
			c.addIssue(field, "must be valid JSON")
		}
	default:
		c.unknown = errors.Join(c.unknown, e)
	}
}

func (c *collector) addResponseError(e *openapi3filter.ResponseError) {
	var se *openapi3.SchemaError
	switch {
	case e.Err == nil:
		c.addResponseReason(e)
	case isMulti(e.Err) || errors.As(e.Err, &se):
		prefix := ""
		if name, ok := strings.CutPrefix(e.Reason, "response header "); ok {
			if n, err := strconv.QuotedPrefix(name); err == nil {
				n, _ = strconv.Unquote(n)
				prefix = n + " (header)"
			}
		}
		c.addSchemaErrors(prefix, e.Err)
	default:
		// Undecodable body or header: the reason names what failed.
		c.addIssue("(response)", e.Reason)
	}
}

// addSchemaErrors adds a schema error or a MultiError of them.
func (c *collector) addSchemaErrors(prefix string, err error) {
	if me, ok := err.(openapi3.MultiError); ok {
		for _, err := range me {
			c.addSchemaErrors(prefix, err)
		}
		return
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		c.addFailure(prefix, kinFailure{se})
		return
	}
	c.unknown = errors.Join(c.unknown, err)
}

// addResponseReason rewords the findings of kin-openapi that are not
// schema errors: an undeclared status, a missing header, a content type.
func (c *collector) addResponseReason(e *openapi3filter.ResponseError) {
	reason := e.Reason
	if name, ok := strings.CutPrefix(reason, "response header "); ok {
		if n, err := strconv.QuotedPrefix(name); err == nil && strings.HasSuffix(name, " missing") {
			n, _ = strconv.Unquote(n)
			c.addIssue(n+" (header)", "is required")
			return
		}
	}
	if strings.Contains(reason, "header Content-Type has unexpected value") {
		c.addIssue("Content-Type (header)", "must be "+c.responseMediaTypes(e.Input))
		return
	}
	if reason == "status is not supported" && e.Input != nil {
		c.addIssue("(status)", strconv.Itoa(e.Input.Status)+" is not declared for this operation")
		return
	}
	c.addIssue("(response)", reason)
}

// responseMediaTypes names the media types declared for the status.
func (c *collector) responseMediaTypes(in *openapi3filter.ResponseValidationInput) string {
	if c.operation == nil || in == nil {
		return "as declared"
	}
	ref := c.operation.Responses.Status(in.Status)
	if ref == nil {
		ref = c.operation.Responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return "as declared"
	}
	types := make([]string, 0, 1)
	for mt := range ref.Value.Content {
		types = append(types, mt)
	}
	slices.Sort(types)
	return strings.Join(types, " or ")
}

// requestMediaTypes names the media types the operation accepts.
func (c *collector) requestMediaTypes() string {
	if c.operation == nil || c.operation.RequestBody == nil || c.operation.RequestBody.Value == nil {
		return "absent"
	}
	types := make([]string, 0, 1)
	for mt := range c.operation.RequestBody.Value.Content {
		types = append(types, mt)
	}
	slices.Sort(types)
	return strings.Join(types, " or ")
}

// addFailure walks a tree of validation failures. The JSON Schema 2020-12
// validator reports a tree: inner nodes group the errors of a keyword
// (anyOf, allOf, a $ref, properties); leaves carry the failing keyword.
func (c *collector) addFailure(prefix string, f failure) {
	children := f.children()
	if len(children) == 0 {
		c.addLeaf(prefix, f)
		return
	}
	switch f.keyword() {
	case "anyOf", "oneOf":
		c.addAlternatives(prefix, f, children)
	default:
		for _, child := range children {
			c.addFailure(prefix, child)
		}
	}
}

// childErrors returns the schema errors grouped under se.
func childErrors(se *openapi3.SchemaError) []*openapi3.SchemaError {
	if se.Origin == nil {
		return nil
	}
	var me openapi3.MultiError
	if !errors.As(se.Origin, &me) {
		return nil
	}
	children := make([]*openapi3.SchemaError, 0, len(me))
	for _, err := range me {
		var child *openapi3.SchemaError
		if errors.As(err, &child) {
			children = append(children, child)
		}
	}
	return children
}

// leaves returns the leaf failures under f.
func leaves(f failure) []failure {
	children := f.children()
	if len(children) == 0 {
		return []failure{f}
	}
	var out []failure
	for _, child := range children {
		out = append(out, leaves(child)...)
	}
	return out
}

// addAlternatives reports a failed anyOf or oneOf. When every alternative
// failed only for missing fields of the same object, one issue says which
// fields would satisfy it: "customer: must include name, or first_name and
// last_name".
func (c *collector) addAlternatives(prefix string, f failure, children []failure) {
	// Inner wrappers of the same keyword group the alternatives.
	for len(children) == 1 && children[0].keyword() == f.keyword() && len(children[0].children()) > 0 {
		children = children[0].children()
	}
	field := fieldPath(prefix, f.pointer())
	var options []string
	for _, child := range children {
		var missing []string
		for _, leaf := range leaves(child) {
			req, ok := leaf.kind().(*kind.Required)
			if !ok || fieldPath(prefix, leaf.pointer()) != field {
				missing = nil
				break
			}
			missing = append(missing, req.Missing...)
		}
		if len(missing) == 0 {
			options = nil
			break
		}
		options = append(options, strings.Join(missing, " and "))
	}
	if len(options) > 0 {
		c.addIssue(field, "must include "+strings.Join(options, ", or "))
		return
	}
	c.addIssue(field, "must match one of the allowed forms")
	for i, child := range children {
		before := len(c.issues)
		c.addFailure(prefix, child)
		for j := before; j < len(c.issues); j++ {
			c.issues[j] += fmt.Sprintf(" (in form %d)", i+1)
		}
	}
}

// addLeaf reports one failed keyword.
func (c *collector) addLeaf(prefix string, f failure) {
	ptr := f.pointer()
	field := fieldPath(prefix, ptr)
	k := f.kind()
	if k == nil {
		if kf, ok := f.(kinFailure); ok {
			c.addBuiltinLeaf(field, kf.se)
		}
		return
	}
	switch k := k.(type) {
	case *kind.Required:
		suffix := c.condition(f.schemaURL())
		for _, name := range k.Missing {
			c.addIssue(fieldPath(prefix, append(slices.Clone(ptr), name)), "is required"+suffix)
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			c.addIssue(field, "unknown field "+strconv.Quote(shorten(name)))
		}
	case *kind.DependentRequired:
		for _, name := range k.Missing {
			c.addIssue(fieldPath(prefix, append(slices.Clone(ptr), name)), "is required when "+k.Prop+" is given")
		}
	default:
		c.addIssue(field, describe(k))
	}
}

// describe says what a failed keyword requires, without the failing value.
func describe(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = article(w)
		}
		return "must be " + strings.Join(want, " or ")
	case *kind.Enum:
		if len(k.Want) == 1 {
			return "must be " + display(k.Want[0])
		}
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = display(w)
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.Const:
		return "must be " + display(k.Want)
	case *kind.Format:
		return describeFormat(k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %s", plural(k.Want, "character"))
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %s", plural(k.Want, "character"))
	case *kind.Pattern:
		return "must match the pattern " + strconv.Quote(k.Want)
	case *kind.Minimum:
		return "must be at least " + number(k.Want)
	case *kind.Maximum:
		return "must be at most " + number(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be greater than " + number(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be less than " + number(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + number(k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %s", plural(k.Want, "item"))
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %s", plural(k.Want, "item"))
	case *kind.UniqueItems:
		return "must not repeat an item"
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %s", plural(k.Want, "field"))
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %s", plural(k.Want, "field"))
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return "must match exactly one of the allowed forms, but matches several"
		}
		return "must match one of the allowed forms"
	case *kind.AnyOf:
		return "must match one of the allowed forms"
	case *kind.FalseSchema:
		return "is not allowed"
	case *kind.Not:
		return "matches a form that is not allowed"
	case *kind.PropertyNames:
		return "has a field name that is not allowed"
	default:
		if path := k.KeywordPath(); len(path) > 0 {
			return "does not match the rule " + strconv.Quote(strings.Join(path, "/"))
		}
		return "is invalid"
	}
}

// addBuiltinLeaf reports an error of kin-openapi's own validator, which
// checks the schemas that use no JSON Schema 2020-12 keyword. Its messages
// are reworded like those of the JSON Schema validator.
func (c *collector) addBuiltinLeaf(field string, se *openapi3.SchemaError) {
	s := se.Schema
	if s == nil {
		s = &openapi3.Schema{}
	}
	msg := ""
	switch se.SchemaField {
	case "required":
		msg = "is required" // the path already names the field
	case "properties":
		// The reason is `property "<name>" is unsupported`.
		if _, rest, ok := strings.Cut(se.Reason, "property "); ok {
			if name, err := strconv.QuotedPrefix(rest); err == nil {
				if name, err := strconv.Unquote(name); err == nil {
					msg = "unknown field " + strconv.Quote(shorten(name))
				}
			}
		}
	case "type":
		if s.Type != nil && len(s.Type.Slice()) > 0 {
			want := make([]string, 0, len(s.Type.Slice()))
			for _, t := range s.Type.Slice() {
				want = append(want, article(t))
			}
			msg = "must be " + strings.Join(want, " or ")
		}
	case "enum":
		if len(s.Enum) > 0 {
			msg = describe(&kind.Enum{Want: s.Enum})
		}
	case "format":
		msg = describeFormat(s.Format)
	case "pattern":
		msg = "must match the pattern " + strconv.Quote(s.Pattern)
	case "minLength":
		msg = "must be at least " + plural(int(s.MinLength), "character")
	case "maxLength":
		if s.MaxLength != nil {
			msg = "must be at most " + plural(int(*s.MaxLength), "character")
		}
	case "minimum":
		if s.Min != nil {
			msg = "must be at least " + strconv.FormatFloat(*s.Min, 'g', -1, 64)
		}
	case "maximum":
		if s.Max != nil {
			msg = "must be at most " + strconv.FormatFloat(*s.Max, 'g', -1, 64)
		}
	case "exclusiveMinimum":
		if v := s.ExclusiveMin.Value; v != nil {
			msg = "must be greater than " + strconv.FormatFloat(*v, 'g', -1, 64)
		}
	case "exclusiveMaximum":
		if v := s.ExclusiveMax.Value; v != nil {
			msg = "must be less than " + strconv.FormatFloat(*v, 'g', -1, 64)
		}
	case "minItems":
		msg = "must have at least " + plural(int(s.MinItems), "item")
	case "maxItems":
		if s.MaxItems != nil {
			msg = "must have at most " + plural(int(*s.MaxItems), "item")
		}
	case "uniqueItems":
		msg = "must not repeat an item"
	}
	if msg == "" {
		// kin-openapi keeps values out of the reasons of its own validator.
		msg = se.Reason
		if msg == "" {
			msg = "does not match the rule " + strconv.Quote(se.SchemaField)
		}
	}
	c.addIssue(field, msg)
}

func describeFormat(format string) string {
	switch format {
	case "email":
		return "must be a valid e-mail address"
	case "uuid":
		return "must be a UUID (e.g. 0b6c0f8e-8d53-4c52-a5f0-7c6b1e0f2a11)"
	case "date-time":
		return "must be an RFC 3339 date-time with offset (e.g. 2026-03-02T09:15:00+01:00)"
	case "uri":
		return "must be an absolute URI"
	default:
		return "must be a valid " + format
	}
}

// condition explains a failed `then` of an if/then rule at the top level of
// the request body schema, e.g. ` when vertical_id is "moving" and
// job_type_id is "moving_home"`. It returns "" when the rule cannot be found.
func (c *collector) condition(schemaURL string) string {
	_, frag, ok := strings.Cut(schemaURL, "#")
	if !ok || c.bodySchema == nil || strings.HasPrefix(frag, "/$defs/") {
		return ""
	}
	if c.bodyFragment != "" {
		rest, inBody := strings.CutPrefix(frag, c.bodyFragment)
		if !inBody || (rest != "" && rest[0] != '/') {
			return "" // a rule of a referenced schema
		}
		frag = rest
	}
	i := strings.LastIndex(frag, "/then")
	if i < 0 || (len(frag) > i+5 && frag[i+5] != '/') {
		return ""
	}
	node, ok := c.bodySchema, true
	for _, tok := range strings.Split(strings.TrimPrefix(frag[:i], "/"), "/") {
		if tok == "" {
			continue
		}
		switch n := node.(type) {
		case map[string]any:
			node, ok = n[unescapePointer(tok)]
		case []any:
			idx, err := strconv.Atoi(tok)
			if err != nil || idx < 0 || idx >= len(n) {
				return ""
			}
			node = n[idx]
		default:
			return ""
		}
		if !ok {
			return ""
		}
	}
	parent, _ := node.(map[string]any)
	cond, _ := parent["if"].(map[string]any)
	props, _ := cond["properties"].(map[string]any)
	if len(props) == 0 {
		return ""
	}
	// The order of the rule's required list, then the other names sorted.
	var names, rest []string
	required, _ := cond["required"].([]any)
	for _, r := range required {
		if name, ok := r.(string); ok && props[name] != nil {
			names = append(names, name)
		}
	}
	for name := range props {
		if !slices.Contains(names, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	names = append(names, rest...)
	var parts []string
	for _, name := range names {
		p, _ := props[name].(map[string]any)
		if v, ok := p["const"]; ok {
			parts = append(parts, name+" is "+display(v))
		} else if vs, ok := p["enum"].([]any); ok {
			ds := make([]string, len(vs))
			for i, v := range vs {
				ds[i] = display(v)
			}
			parts = append(parts, name+" is one of "+strings.Join(ds, ", "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " when " + strings.Join(parts, " and ")
}

// fieldPath renders a JSON pointer as a dotted path with [i] for array
// items, e.g. "customer.email" or "event_types[1]"; the empty pointer is
// "(root)". A non-empty prefix names a parameter.
func fieldPath(prefix string, ptr []string) string {
	var b strings.Builder
	for _, tok := range ptr {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(shorten(tok))
	}
	switch {
	case b.Len() == 0 && prefix != "":
		return prefix
	case b.Len() == 0:
		return "(root)"
	case prefix != "":
		return prefix + "." + b.String()
	default:
		return b.String()
	}
}

func unescapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// shorten caps a name that may come from the request.
func shorten(s string) string {
	if len(s) <= maxNameLen {
		return s
	}
	cut := maxNameLen
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func display(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case nil:
		return "null"
	default:
		return fmt.Sprint(v)
	}
}

func article(typ string) string {
	switch typ {
	case "integer", "array", "object":
		return "an " + typ
	case "null":
		return "null"
	default:
		return "a " + typ
	}
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

func number(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
