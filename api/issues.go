package api

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

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
	bodySchema any // JSON form of the body schema validated, if any
	// bodyFragment is the JSON pointer of the body schema inside the
	// document; the validator's schema locations are document-absolute.
	bodyFragment string
	issues       []string
}

// failure is one node of a validation error tree of the JSON Schema
// validator.
type failure interface {
	// children are the failures grouped under this one.
	children() []failure
	// keyword is the failing keyword of the node ("anyOf", "required").
	keyword() string
	// pointer is the location of the failing value, as JSON pointer tokens.
	pointer() []string
	// kind is the JSON Schema error kind of the node.
	kind() jsonschema.ErrorKind
	// schemaURL is the location of the failing schema, or "".
	schemaURL() string
}

// jsFailure adapts a ValidationError of the compiled validators. A node
// that only wraps a single chain of causes
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
	switch k := f.kind().(type) {
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
