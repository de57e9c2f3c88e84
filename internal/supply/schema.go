package supply

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"gopkg.in/yaml.v3"
)

// schemaJSON is the JSON Schema of a supply file's structure.
//
//go:embed supply.schema.json
var schemaJSON []byte

const schemaURL = "urn:bokat:supply.schema.json"

// formats are the string formats of the schema; the error of a check is
// the problem's message.
var formats = map[string]func(string) error{
	"provider-id":    checkProviderID,
	"mailbox":        checkEmail,
	"phone":          checkPhone,
	"postcode-range": func(s string) error { _, err := ParsePostcodeRange(s); return err },
	"clock-range":    func(s string) error { _, err := parseClockRange(s); return err },
	"instant":        func(s string) error { _, err := parseInstant(s, false); return err },
	"calendar-url":   checkCalendarURL,
}

// fileSchema is the compiled schema and, for reading keywords back in
// error messages (in the order they are written), its document as a YAML
// node.
var fileSchema = sync.OnceValues(func() (*jsonschema.Schema, *yaml.Node) {
	sch := compileSchema(schemaURL, nil)
	var node yaml.Node
	if err := yaml.Unmarshal(schemaJSON, &node); err != nil {
		panic(fmt.Sprintf("supply: %v", err))
	}
	return sch, node.Content[0]
})

// rootSchemaURL names the schema of a file's top level alone: the schema
// with the providers' items left unchecked (scan checks each provider
// with providerSchema). Its keywords lie where the schema's do.
const rootSchemaURL = "urn:bokat:supply-root.schema.json"

// partSchemas are the schema of a file's top level alone and the schema of
// one provider (the schema's $defs/provider), for reading a file provider
// by provider.
var partSchemas = sync.OnceValues(func() (root, provider *jsonschema.Schema) {
	return compileSchema(rootSchemaURL, func(doc any) {
		doc.(map[string]any)["properties"].(map[string]any)["providers"].(map[string]any)["items"] = true
	}), compileSchema(schemaURL+"#/$defs/provider", nil)
})

// compileSchema compiles the schema, changed by edit when given, as the
// schema of url (with a fragment: the part of the schema it names).
func compileSchema(url string, edit func(doc any)) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		panic(fmt.Sprintf("supply: the schema is not JSON: %v", err))
	}
	resource, _, _ := strings.Cut(url, "#")
	if edit != nil {
		edit(doc)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for name, check := range formats {
		c.RegisterFormat(&jsonschema.Format{Name: name, Validate: func(v any) error {
			if s, ok := text(v); ok {
				return check(s)
			}
			return nil // the type says what is wrong
		}})
	}
	c.AssertFormat()
	if err := c.AddResource(resource, doc); err != nil {
		panic(fmt.Sprintf("supply: %v", err))
	}
	sch, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("supply: the schema does not compile: %v", err))
	}
	return sch
}

// text is a scalar of the converted file as text: strings as they are,
// integers as written, booleans as "true" or "false".
func text(v any) (string, bool) {
	if r, ok := v.(repeat); ok {
		v = r.value
	}
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return string(v), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// integer is an integer of the converted file; ok is false for anything
// else or a value beyond int64 (which the schema refuses).
func integer(v any) (int64, bool) {
	n, ok := as[json.Number](v)
	if !ok {
		return 0, false
	}
	if i, ok := plainInteger(string(n)); ok {
		return i, true
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

// converter turns a YAML node tree into the values JSON Schema validates:
// mappings, lists, and scalars by their YAML tag (see the schema's
// description). An anchored node is converted once and shared by its
// aliases, so converting is linear in the nodes of the file; and so is
// validating: an alias met again at a place of the same schema is a
// repeat, which the validator refuses at once as no JSON value
// (schemaIssues drops that) instead of validating it again. Problems of an
// aliased value are so reported once per place.
type converter struct {
	shared map[*yaml.Node]any
	// placed holds the anchored nodes met, with the places met (the
	// tokens, list indexes as "*").
	placed map[placement]bool
	at     []string // the tokens of the value being converted
	place  []string // at, list indexes as "*"
	// twice lists keys given again in a mapping; the first one counts.
	twice []repeatedKey
}

type placement struct {
	node  *yaml.Node
	place string
}

// repeat is a value validated already at an earlier place of the same
// schema.
type repeat struct{ value any }

// as returns v, or the value v repeats, as a T.
func as[T any](v any) (T, bool) {
	if r, ok := v.(repeat); ok {
		v = r.value
	}
	t, ok := v.(T)
	return t, ok
}

type repeatedKey struct {
	at  []string // of the mapping
	key *yaml.Node
}

func (c *converter) value(n *yaml.Node) any {
	n = resolve(n)
	if n.Anchor != "" {
		p := placement{n, strings.Join(c.place, "/")}
		if c.placed[p] {
			return repeat{c.shared[n]}
		}
		if c.placed == nil {
			c.placed = map[placement]bool{}
		}
		c.placed[p] = true
	}
	if v, ok := c.shared[n]; ok {
		return v
	}
	share := func(v any) {
		if n.Anchor != "" {
			if c.shared == nil {
				c.shared = map[*yaml.Node]any{}
			}
			c.shared[n] = v
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		share(m)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if _, dup := m[k.Value]; dup {
				c.twice = append(c.twice, repeatedKey{slices.Clone(c.at), k})
				continue
			}
			c.at, c.place = append(c.at, k.Value), append(c.place, k.Value)
			m[k.Value] = c.value(n.Content[i+1])
			c.at, c.place = c.at[:len(c.at)-1], c.place[:len(c.place)-1]
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		share(s)
		for i, item := range n.Content {
			c.at, c.place = append(c.at, strconv.Itoa(i)), append(c.place, "*")
			s[i] = c.value(item)
			c.at, c.place = c.at[:len(c.at)-1], c.place[:len(c.place)-1]
		}
		return s
	}
	var out any
	if n.Kind == yaml.ScalarNode {
		out = scalar(n)
	}
	share(out)
	return out
}

func scalar(n *yaml.Node) any {
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		if _, ok := plainInteger(n.Value); ok {
			return json.Number(n.Value)
		}
		if r, ok := new(big.Rat).SetString(n.Value); ok && r.IsInt() && len(n.Value) <= 100 {
			return json.Number(n.Value)
		}
	}
	return strings.TrimSpace(n.Value)
}

// plainInteger reads the most common integers quickly: an optional "-",
// then up to 18 decimal digits without a leading zero (or "0"). Anything
// else is left to math/big, which reads it the same.
func plainInteger(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	var n int64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(s) {
		n = -n
	}
	return n, true
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// issue is a problem found in the converted file, at the value the JSON
// pointer tokens at name; field, when set, is a member of that value the
// problem is about (a missing one, say), and key places the problem at the
// value's key rather than the value.
type issue struct {
	at    []string
	field string
	key   bool
	// unknown marks an unknown key; repeated, a key given again (the
	// problem is there). Both are found reading a mapping's keys: they come
	// before the mapping's other problems at one place.
	unknown  bool
	repeated *yaml.Node
	// wrongType marks a value of the wrong type.
	wrongType bool
	message   string
}

// schemaIssues turns the failures of schema validation into issues.
func schemaIssues(err error) []issue {
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return nil
	}
	_, doc := fileSchema()
	var out []issue
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		_, ptr, _ := strings.Cut(e.SchemaURL, "#")
		sch := lookup(doc, ptr)
		at := e.InstanceLocation
		add := func(message string) { out = append(out, issue{at: at, message: message}) }
		switch k := e.ErrorKind.(type) {
		case *kind.InvalidJsonValue:
			// a repeat (see converter)
		case *kind.Type:
			out = append(out, issue{at: at, wrongType: true, message: typeMessage(k.Want)})
		case *kind.Required:
			for _, name := range k.Missing {
				out = append(out, issue{at: at, field: name, message: "is required"})
			}
		case *kind.AdditionalProperties:
			allowed := strings.Join(keys(member(sch, "properties")), ", ")
			for _, name := range k.Properties {
				out = append(out, issue{at: append(slices.Clip(at), name), key: true, unknown: true, message: "unknown field; allowed are " + allowed})
			}
		case *kind.Minimum, *kind.Maximum:
			add(fmt.Sprintf("must be a whole number from %s to %s", member(sch, "minimum").Value, member(sch, "maximum").Value))
		case *kind.MinLength, *kind.MaxLength:
			if lo := member(sch, "minLength"); lo != nil {
				add(fmt.Sprintf("must be %s to %s characters", lo.Value, member(sch, "maxLength").Value))
			} else {
				add(fmt.Sprintf("must be at most %s characters", member(sch, "maxLength").Value))
			}
		case *kind.Const:
			add(fmt.Sprintf("must be %v", k.Want))
		case *kind.Format:
			add(k.Err.Error())
		default:
			keyword := e.ErrorKind.KeywordPath()[0]
			if m := member(member(sch, "errorMessage"), keyword); m != nil {
				add(m.Value)
			} else {
				add("fails the schema's " + keyword)
			}
		}
	}
	walk(verr)
	return out
}

func typeMessage(want []string) string {
	switch {
	case slices.Contains(want, "string"):
		return "must be text"
	case slices.Contains(want, "object"):
		return "must be a mapping of fields"
	case slices.Contains(want, "array"):
		return "must be a list"
	case slices.Contains(want, "boolean"):
		return "must be true or false"
	default:
		return "must be a whole number"
	}
}

var unescapePointer = strings.NewReplacer("~1", "/", "~0", "~")

// lookup returns the node at a JSON pointer of the schema document.
func lookup(n *yaml.Node, ptr string) *yaml.Node {
	for tok := range strings.SplitSeq(strings.TrimPrefix(ptr, "/"), "/") {
		if n == nil || tok == "" {
			break
		}
		n = member(n, unescapePointer.Replace(tok))
	}
	return n
}

// member returns the value of a mapping's key, or nil.
func member(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// keys returns a mapping's keys in order.
func keys(n *yaml.Node) []string {
	var out []string
	for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
		out = append(out, n.Content[i].Value)
	}
	return out
}

// locate finds the node of a file that the tokens name and the field path
// of it ("providers[2].services[0]"); at the key when key is set. Aliases are
// followed. Within is called with every node on the way, the last one
// included. When the tokens name no node, it returns the last one found and
// false.
func locate(root *yaml.Node, tokens []string, key bool, within func(*yaml.Node)) (*yaml.Node, string, bool) {
	return locateFrom(root, "", tokens, key, within)
}

// locateFrom is locate from the node n whose field path is path.
func locateFrom(n *yaml.Node, path string, tokens []string, key bool, within func(*yaml.Node)) (*yaml.Node, string, bool) {
	n = resolve(n)
	within(n)
	for i, tok := range tokens {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == tok {
					next = n.Content[j+1]
					if key && i == len(tokens)-1 {
						next = n.Content[j]
					}
					break
				}
			}
			path = join(path, tok)
		case yaml.SequenceNode:
			if j, err := strconv.Atoi(tok); err == nil && j >= 0 && j < len(n.Content) {
				next = n.Content[j]
			}
			path = index(path, tok)
		}
		if next == nil {
			return n, path, false
		}
		n = resolve(next)
		within(n)
	}
	return n, path, true
}

// locator finds the node that tokens name, as locate does.
type locator func(tokens []string, key bool, within func(*yaml.Node)) (*yaml.Node, string, bool)

// rootLocator locates from the root of a file.
func rootLocator(root *yaml.Node) locator {
	return func(tokens []string, key bool, within func(*yaml.Node)) (*yaml.Node, string, bool) {
		return locate(root, tokens, key, within)
	}
}

// locateIssues returns the problems of issues in file order, at their
// lines and columns in the file that locate finds them in. It drops the
// issues within the values of skip (whose schema issues a rule replaced).
func locateIssues(locate locator, issues []issue, skip [][]string) []Problem {
	skipped := map[*yaml.Node]bool{}
	for _, tokens := range skip {
		if n, _, found := locate(tokens, false, func(*yaml.Node) {}); found {
			skipped[n] = true
		}
	}
	type located struct {
		Problem
		early bool // found reading a mapping's keys: first at one place
	}
	rank := func(l located) int {
		if l.early {
			return 0
		}
		return 1
	}
	var out []located
	place := func(is issue) {
		drop := false
		n, path, _ := locate(is.at, is.key, func(n *yaml.Node) { drop = drop || skipped[n] })
		if drop {
			return
		}
		if is.repeated != nil {
			n = is.repeated
		}
		if is.field != "" {
			path = join(path, is.field)
		}
		out = append(out, located{Problem{Line: n.Line, Column: n.Column, Path: path, Message: is.message},
			is.unknown || is.repeated != nil})
	}
	// A key given twice that is unknown is reported unknown twice; keys
	// given twice within the value of an unknown key, or within a value of
	// the wrong type, are not read, so not reported.
	unknown := map[string]string{}
	unread := map[string]bool{}
	for _, is := range issues {
		if is.unknown {
			unknown[strings.Join(is.at, "/")] = is.message
		}
		if is.unknown || is.wrongType {
			unread[strings.Join(is.at, "/")] = true
		}
	}
	for _, is := range issues {
		if is.repeated != nil {
			if slices.ContainsFunc(prefixes(is.at[:len(is.at)-1]), func(p string) bool { return unread[p] }) {
				continue
			}
			if msg, ok := unknown[strings.Join(is.at, "/")]; ok {
				is.message = msg
			}
		}
		place(is)
	}
	slices.SortStableFunc(out, func(a, b located) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), rank(a)-rank(b))
	})
	problems := make([]Problem, len(out))
	for i, p := range out {
		problems[i] = p.Problem
	}
	return problems
}

// compareTokens orders JSON pointer tokens, indexes by number.
func compareTokens(a, b []string) int {
	for i := range min(len(a), len(b)) {
		x, errX := strconv.Atoi(a[i])
		y, errY := strconv.Atoi(b[i])
		if errX == nil && errY == nil {
			if x != y {
				return cmp.Compare(x, y)
			}
		} else if a[i] != b[i] {
			return strings.Compare(a[i], b[i])
		}
	}
	return cmp.Compare(len(a), len(b))
}

// prefixes returns the tokens of tokens' leading parts, all of them
// included, joined by "/".
func prefixes(tokens []string) []string {
	out := make([]string, len(tokens)+1)
	for i := range out {
		out[i] = strings.Join(tokens[:i], "/")
	}
	return out
}

// pathOf is the field path of tokens whose numeric tokens are list indexes.
func pathOf(tokens []string) string {
	path := ""
	for _, tok := range tokens {
		if _, err := strconv.Atoi(tok); err == nil {
			path = index(path, tok)
		} else {
			path = join(path, tok)
		}
	}
	return path
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func index(path, i string) string { return path + "[" + i + "]" }
