// Package supply reads Bokat's supply file — providers, the postcodes they
// cover, their own prices per catalog service, job durations, weekly working
// hours and blocked periods — validates it against the catalog, and imports
// it into the store in one transaction. The format is documented in
// docs/supply-format.md; the demo supply of `serve --demo` is a file of this
// format embedded in the binary (demo.yaml).
//
// Parse reports every problem of a file at once, each with its line and
// column, and Import writes nothing when there is any. Importing the same
// file again changes nothing: providers are matched by id, and only what
// differs is written.
package supply

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
)

//go:embed demo.yaml
var demoFile []byte

// DemoName is the name the embedded demo supply reports errors under.
const DemoName = "demo.yaml"

// Demo returns the demo supply file (see DECISIONS.md, "Demo supply").
func Demo() []byte { return slices.Clone(demoFile) }

// FormatVersion is the only `version` a supply file may declare.
const FormatVersion = 1

// Defaults of optional provider fields.
const (
	DefaultMinNoticeMinutes = 120
	DefaultHorizonDays      = 14
	maxHorizonDays          = 365
	maxPriceSEK             = 10_000_000
)

// Problem is one error in a supply file, at a 1-based line and column
// (zero when the file could not be read that far).
type Problem struct {
	Line, Column int
	// Path names the field, e.g. "providers[2].services[0].price_sek".
	Path    string
	Message string
}

// Errors lists every problem of a supply file. Its Error text has one line
// per problem: "<file>:<line>:<column>: <path>: <message>".
type Errors struct {
	File     string
	Problems []Problem
}

func (e *Errors) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = e.Line(p)
	}
	return strings.Join(lines, "\n")
}

// Line formats one problem.
func (e *Errors) Line(p Problem) string {
	loc := e.File
	if p.Line > 0 {
		loc += ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
	}
	if p.Path != "" {
		return loc + ": " + p.Path + ": " + p.Message
	}
	return loc + ": " + p.Message
}

// Parse reads and validates a supply file against the catalog. It returns
// the providers it describes, or *Errors listing every problem found.
func Parse(name string, data []byte, cat *catalog.Catalog) ([]bokat.ProviderSupply, error) {
	d := &decoder{cat: cat}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Errors{File: name, Problems: []Problem{yamlProblem(err)}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &Errors{File: name, Problems: []Problem{{Message: "the file is empty; see docs/supply-format.md"}}}
	}
	if n := aliasExpansion(&doc); n > MaxAliasExpansion {
		return nil, &Errors{File: name, Problems: []Problem{{Message: fmt.Sprintf(
			"aliases repeat more than %d YAML nodes; write such lists out, or cover postcodes with ranges (\"111-118\")",
			MaxAliasExpansion)}}}
	}
	out := d.file(doc.Content[0])
	if len(d.problems) > 0 {
		slices.SortStableFunc(d.problems, func(a, b Problem) int {
			if a.Line != b.Line {
				return a.Line - b.Line
			}
			return a.Column - b.Column
		})
		return nil, &Errors{File: name, Problems: d.problems}
	}
	return out, nil
}

// MaxAliasExpansion bounds the YAML nodes that aliases (*name) of a supply
// file repeat, counted with the aliases nested in them. It keeps a small
// file from expanding into an enormous supply ("billion laughs"), while
// letting thousands of providers share a postcode list, hours or services.
const MaxAliasExpansion = 5_000_000

// aliasExpansion returns how many nodes the aliases of the document repeat
// (saturating at MaxAliasExpansion+1). It visits every node once.
func aliasExpansion(doc *yaml.Node) int {
	limit := MaxAliasExpansion + 1
	sizes := map[*yaml.Node]int{}
	var size func(n *yaml.Node, depth int) int
	size = func(n *yaml.Node, depth int) int {
		if n == nil {
			return 0
		}
		if n.Kind == yaml.AliasNode {
			n = n.Alias
			if n == nil {
				return 1
			}
		}
		if s, ok := sizes[n]; ok {
			return s
		}
		if depth > 1000 {
			return limit // an alias cycle or absurd nesting
		}
		sizes[n] = limit // a cycle through n saturates
		s := 1
		for _, c := range n.Content {
			s = min(s+size(c, depth+1), limit)
		}
		sizes[n] = s
		return s
	}
	total := 0
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || total >= limit {
			return
		}
		if n.Kind == yaml.AliasNode {
			total = min(total+size(n, 0), limit)
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(doc)
	return total
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func yamlProblem(err error) Problem {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Problem{Line: line, Column: 1, Message: "not valid YAML: " + m[2]}
	}
	return Problem{Message: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

type decoder struct {
	cat      *catalog.Catalog
	problems []Problem
	// memo holds the decoded postcodes, hours and services of list and
	// mapping nodes, so an alias of a node is decoded once (its problems
	// are reported once, at the anchored node).
	memo map[*yaml.Node]any
}

// memoized returns the value decoded from n before, or decodes it with fn
// and keeps it when n is the target of an alias.
func memoized[T any](d *decoder, n *yaml.Node, fn func() T) T {
	r := resolve(n)
	if r == nil || r.Anchor == "" {
		return fn()
	}
	if v, ok := d.memo[r]; ok {
		return v.(T)
	}
	v := fn()
	if d.memo == nil {
		d.memo = map[*yaml.Node]any{}
	}
	d.memo[r] = v
	return v
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	p := Problem{Path: path, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
	}
	d.problems = append(d.problems, p)
}

// field is a member of a mapping with the node of its key (for locations).
type field struct {
	key, value *yaml.Node
}

// fields reads a mapping, reporting a non-mapping, duplicate keys and keys
// outside allowed, and returns its members by key.
func (d *decoder) fields(n *yaml.Node, path string, allowed ...string) map[string]field {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "must be a mapping of fields")
		return nil
	}
	out := make(map[string]field, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if !slices.Contains(allowed, name) {
			d.fail(k, join(path, name), "unknown field; allowed are %s", strings.Join(allowed, ", "))
			continue
		}
		if _, dup := out[name]; dup {
			d.fail(k, join(path, name), "given twice")
			continue
		}
		out[name] = field{key: k, value: v}
	}
	return out
}

// required reports a missing member and returns its value node or nil.
func (d *decoder) required(fs map[string]field, parent *yaml.Node, path, name string) *yaml.Node {
	f, ok := fs[name]
	if !ok {
		d.fail(parent, join(path, name), "is required")
		return nil
	}
	return f.value
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// str reads a scalar as text; numbers are accepted as their digits (an
// unquoted postcode reads as a number in YAML).
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.fail(n, path, "must be text")
		return "", false
	}
	return n.Value, true
}

// text reads a string of length lo..hi (in characters).
func (d *decoder) text(n *yaml.Node, path string, lo, hi int) (string, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return "", false
	}
	s = strings.TrimSpace(s)
	if l := len([]rune(s)); l < lo || l > hi {
		if lo > 0 {
			d.fail(n, path, "must be %d to %d characters", lo, hi)
		} else {
			d.fail(n, path, "must be at most %d characters", hi)
		}
		return "", false
	}
	return s, true
}

// integer reads a whole number in lo..hi.
func (d *decoder) integer(n *yaml.Node, path string, lo, hi int64) (int64, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.fail(n, path, "must be a whole number")
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil || v < lo || v > hi {
		d.fail(n, path, "must be a whole number from %d to %d", lo, hi)
		return 0, false
	}
	return v, true
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.fail(n, path, "must be true or false")
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		d.fail(n, path, "must be true or false")
		return false, false
	}
	return b, true
}

func isEmptySeq(n *yaml.Node) bool {
	n = resolve(n)
	return n.Kind == yaml.SequenceNode && len(n.Content) == 0
}

func (d *decoder) seq(n *yaml.Node, path string) []*yaml.Node {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "must be a list")
		return nil
	}
	return n.Content
}

var providerIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

func (d *decoder) file(root *yaml.Node) []bokat.ProviderSupply {
	fs := d.fields(root, "", "version", "providers")
	if fs == nil {
		return nil
	}
	if v := d.required(fs, root, "", "version"); v != nil {
		if n, ok := d.integer(v, "version", 0, 1<<31); ok && n != FormatVersion {
			d.fail(v, "version", "must be %d", FormatVersion)
		}
	}
	list := d.required(fs, root, "", "providers")
	if list == nil {
		return nil
	}
	items := d.seq(list, "providers")
	if isEmptySeq(list) {
		d.fail(list, "providers", "must list at least one provider")
	}
	seen := map[string]int{}
	var out []bokat.ProviderSupply
	for i, item := range items {
		path := index("providers", i)
		p, idNode, ok := d.provider(item, path)
		if !ok {
			continue
		}
		if first, dup := seen[p.ID]; dup {
			d.fail(idNode, join(path, "id"), "duplicates the id of providers[%d]", first)
			continue
		}
		seen[p.ID] = i
		out = append(out, p)
	}
	return out
}

func (d *decoder) provider(n *yaml.Node, path string) (bokat.ProviderSupply, *yaml.Node, bool) {
	before := len(d.problems)
	fs := d.fields(n, path, "id", "name", "city", "rating_label", "email", "phone", "active", "min_notice_minutes",
		"horizon_days", "postcodes", "hours", "services", "blocked")
	if fs == nil {
		return bokat.ProviderSupply{}, nil, false
	}
	p := bokat.ProviderSupply{Provider: bokat.Provider{
		Active: true, MinNoticeMinutes: DefaultMinNoticeMinutes, HorizonDays: DefaultHorizonDays,
	}}
	idNode := d.required(fs, n, path, "id")
	if idNode != nil {
		if id, ok := d.str(idNode, join(path, "id")); ok {
			if !providerIDPattern.MatchString(id) {
				d.fail(idNode, join(path, "id"), "must be 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter or digit")
			}
			p.ID = id
		}
	}
	if v := d.required(fs, n, path, "name"); v != nil {
		p.Name, _ = d.text(v, join(path, "name"), 1, 160)
	}
	if f, ok := fs["city"]; ok {
		p.City, _ = d.text(f.value, join(path, "city"), 0, 120)
	}
	if f, ok := fs["rating_label"]; ok {
		p.RatingLabel, _ = d.text(f.value, join(path, "rating_label"), 0, 80)
	}
	if v := d.required(fs, n, path, "email"); v != nil {
		p.Email, _ = d.email(v, join(path, "email"))
	}
	if f, ok := fs["phone"]; ok {
		p.Phone, _ = d.phone(f.value, join(path, "phone"))
	}
	if f, ok := fs["active"]; ok {
		p.Active, _ = d.boolean(f.value, join(path, "active"))
	}
	if f, ok := fs["min_notice_minutes"]; ok {
		v, _ := d.integer(f.value, join(path, "min_notice_minutes"), 0, 7*24*60)
		p.MinNoticeMinutes = int(v)
	}
	if f, ok := fs["horizon_days"]; ok {
		v, _ := d.integer(f.value, join(path, "horizon_days"), 1, maxHorizonDays)
		p.HorizonDays = int(v)
	}
	if v := d.required(fs, n, path, "postcodes"); v != nil {
		p.Postcodes = memoized(d, v, func() []bokat.PostcodeRange { return d.postcodes(v, join(path, "postcodes")) })
	}
	if v := d.required(fs, n, path, "hours"); v != nil {
		p.Hours = memoized(d, v, func() []bokat.WorkingRange { return d.hours(v, join(path, "hours")) })
	}
	if v := d.required(fs, n, path, "services"); v != nil {
		p.Services = memoized(d, v, func() []bokat.ProviderService { return d.services(v, join(path, "services")) })
	}
	if f, ok := fs["blocked"]; ok {
		p.Blocked = d.blocked(f.value, join(path, "blocked"), p.ID)
	}
	return p, idNode, len(d.problems) == before
}

// Limits of provider contact data. An e-mail address is at most 254
// characters (RFC 5321's path limit less the angle brackets).
const (
	maxEmailLen  = 254
	maxPhoneLen  = 40
	minPhoneDigs = 5
	maxPhoneDigs = 15 // E.164
)

// email reads a provider's e-mail address: one bare address
// ("bokningar@firma.se"), without a display name, angle brackets or
// comments, as net/mail parses it.
func (d *decoder) email(n *yaml.Node, path string) (string, bool) {
	s, ok := d.text(n, path, 3, maxEmailLen)
	if !ok {
		return "", false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		d.fail(n, path, "is not an e-mail address; give one bare address like bokningar@firma.se, without a name or <>")
		return "", false
	}
	return s, true
}

// phone reads a provider's phone number: digits with optional spaces,
// hyphens, parentheses and a leading +, 5 to 15 digits.
func (d *decoder) phone(n *yaml.Node, path string) (string, bool) {
	s, ok := d.text(n, path, minPhoneDigs, maxPhoneLen)
	if !ok {
		return "", false
	}
	digits := 0
	valid := true
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == ' ' || r == '-' || r == '(' || r == ')':
		case r == '+' && i == 0:
		default:
			valid = false
		}
	}
	if !valid || digits < minPhoneDigs || digits > maxPhoneDigs {
		d.fail(n, path, "is not a phone number; give %d to %d digits, optionally with a leading +, spaces, hyphens or parentheses",
			minPhoneDigs, maxPhoneDigs)
		return "", false
	}
	return s, true
}

// postcodes reads coverage entries: a postcode ("113 45"), a prefix of one
// to four digits ("11" or "113"), or a range of either ("111-118",
// "111 00-118 99").
func (d *decoder) postcodes(n *yaml.Node, path string) []bokat.PostcodeRange {
	items := d.seq(n, path)
	if isEmptySeq(n) {
		d.fail(n, path, "must list at least one postcode, prefix or range")
	}
	var out []bokat.PostcodeRange
	for i, item := range items {
		p := index(path, i)
		s, ok := d.str(item, p)
		if !ok {
			continue
		}
		r, err := ParsePostcodeRange(s)
		if err != nil {
			d.fail(item, p, "%v", err)
			continue
		}
		out = append(out, r)
	}
	return out
}

// ParsePostcodeRange reads one coverage entry of a supply file: a
// five-digit postcode ("113 45", "11345"), a prefix of one to four digits
// ("113" is 113 00–113 99), or a range "A-B" of two such entries, from the
// first postcode of A to the last of B.
func ParsePostcodeRange(s string) (bokat.PostcodeRange, error) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "–", "-"))
	if a, b, ok := strings.Cut(s, "-"); ok {
		lo, err := postcodePrefix(a)
		if err != nil {
			return bokat.PostcodeRange{}, err
		}
		hi, err := postcodePrefix(b)
		if err != nil {
			return bokat.PostcodeRange{}, err
		}
		r := bokat.PostcodeRange{From: lo.From, To: hi.To}
		if r.From > r.To {
			return bokat.PostcodeRange{}, fmt.Errorf("range %q ends before it starts", s)
		}
		return r, nil
	}
	return postcodePrefix(s)
}

func postcodePrefix(s string) (bokat.PostcodeRange, error) {
	digits := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if len(digits) == 0 || len(digits) > 5 || strings.Trim(digits, "0123456789") != "" || digits[0] == '0' {
		return bokat.PostcodeRange{}, fmt.Errorf("%q is not a postcode, a postcode prefix (1 to 4 digits) or a range of them; Swedish postcodes are 5 digits from 100 00", strings.TrimSpace(s))
	}
	n, _ := strconv.Atoi(digits)
	scale := 1
	for range 5 - len(digits) {
		scale *= 10
	}
	return bokat.PostcodeRange{From: n * scale, To: n*scale + scale - 1}, nil
}

var weekdayKeys = map[string]time.Weekday{
	"monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday, "thursday": time.Thursday,
	"friday": time.Friday, "saturday": time.Saturday, "sunday": time.Sunday,
}

// hours reads weekly working hours: weekday names (or "weekdays" for Monday
// to Friday) mapped to lists of "HH:MM-HH:MM" ranges.
func (d *decoder) hours(n *yaml.Node, path string) []bokat.WorkingRange {
	before := len(d.problems)
	fs := d.fields(n, path, "weekdays", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
	if fs == nil {
		return nil
	}
	var week schedule.WeeklyHours
	var given [7]bool
	read := func(key string, days []time.Weekday) {
		f, ok := fs[key]
		if !ok {
			return
		}
		p := join(path, key)
		var ranges []schedule.ClockRange
		for i, item := range d.seq(f.value, p) {
			s, ok := d.str(item, index(p, i))
			if !ok {
				continue
			}
			r, err := parseClockRange(s)
			if err != nil {
				d.fail(item, index(p, i), "%v", err)
				continue
			}
			ranges = append(ranges, r)
		}
		for _, day := range days {
			if given[day] {
				d.fail(f.key, p, "%s is also given by \"weekdays\"", strings.ToLower(day.String()))
				continue
			}
			given[day] = true
			week[day] = append(week[day], ranges...)
		}
	}
	read("weekdays", []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday})
	for _, key := range []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"} {
		read(key, []time.Weekday{weekdayKeys[key]})
	}
	var out []bokat.WorkingRange
	for day, ranges := range week {
		slices.SortFunc(ranges, func(a, b schedule.ClockRange) int { return a.Start - b.Start })
		for i, r := range ranges {
			if i > 0 && r.Start < ranges[i-1].End {
				d.fail(n, path, "%s: %s overlaps %s", strings.ToLower(time.Weekday(day).String()), r, ranges[i-1])
			}
			out = append(out, bokat.WorkingRange{Weekday: time.Weekday(day), StartMinute: r.Start, EndMinute: r.End})
		}
	}
	if len(out) == 0 && len(d.problems) == before {
		d.fail(n, path, "must give at least one working range; a provider without hours has no slots")
	}
	return out
}

var clockRangePattern = regexp.MustCompile(`^(\d{1,2}):(\d{2})\s*[-–]\s*(\d{1,2}):(\d{2})$`)

func parseClockRange(s string) (schedule.ClockRange, error) {
	m := clockRangePattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return schedule.ClockRange{}, fmt.Errorf("%q is not a range like \"08:00-17:00\"", s)
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	h1, m1, h2, m2 := num(m[1]), num(m[2]), num(m[3]), num(m[4])
	if h1 > 24 || h2 > 24 || m1 > 59 || m2 > 59 || (h1 == 24 && m1 > 0) || (h2 == 24 && m2 > 0) {
		return schedule.ClockRange{}, fmt.Errorf("%q is not a range of clock times", s)
	}
	r := schedule.ClockRange{Start: h1*60 + m1, End: h2*60 + m2}
	if err := r.Validate(); err != nil {
		return schedule.ClockRange{}, fmt.Errorf("%q must end after it starts, within one day", s)
	}
	return r, nil
}

func (d *decoder) services(n *yaml.Node, path string) []bokat.ProviderService {
	items := d.seq(n, path)
	if isEmptySeq(n) {
		d.fail(n, path, "must list at least one service")
	}
	seen := map[string]int{}
	var out []bokat.ProviderService
	for i, item := range items {
		p := index(path, i)
		fs := d.fields(item, p, "service_id", "price_sek", "unit_price_sek", "minimum_charge_sek", "duration")
		if fs == nil {
			continue
		}
		idNode := d.required(fs, item, p, "service_id")
		if idNode == nil {
			continue
		}
		id, ok := d.str(idNode, join(p, "service_id"))
		if !ok {
			continue
		}
		svc, known := d.cat.Service(id)
		if !known {
			d.fail(idNode, join(p, "service_id"), "%q is not a service of the catalog; see the service_id of each fixed_price_seed in GET /v1/capabilities", id)
			continue
		}
		if first, dup := seen[id]; dup {
			d.fail(idNode, join(p, "service_id"), "is already offered by %s[%d]", path, first)
			continue
		}
		seen[id] = i
		s := bokat.ProviderService{ServiceID: id}
		model := svc.PricingModel
		forbid := func(name, why string) {
			if f, ok := fs[name]; ok {
				d.fail(f.key, join(p, name), "is not used by %s services (%s); %s", model, id, why)
			}
		}
		if model.PerUnit() {
			if v := d.required(fs, item, p, "unit_price_sek"); v != nil {
				s.UnitPriceSEK, _ = d.integer(v, join(p, "unit_price_sek"), 1, maxPriceSEK)
			}
			if f, ok := fs["minimum_charge_sek"]; ok {
				s.MinimumChargeSEK, _ = d.integer(f.value, join(p, "minimum_charge_sek"), 0, maxPriceSEK)
			}
			forbid("price_sek", "give unit_price_sek per "+svc.UnitEN)
		} else {
			if v := d.required(fs, item, p, "price_sek"); v != nil {
				s.PriceSEK, _ = d.integer(v, join(p, "price_sek"), 1, maxPriceSEK)
			}
			forbid("unit_price_sek", "give price_sek")
			forbid("minimum_charge_sek", "give price_sek")
		}
		if f, ok := fs["duration"]; ok {
			s.Duration = d.duration(f.value, join(p, "duration"), model.PerUnit())
		}
		out = append(out, s)
	}
	return out
}

func (d *decoder) duration(n *yaml.Node, path string, perUnit bool) bokat.DurationOverride {
	fs := d.fields(n, path, "fixed_minutes", "minutes_per_unit", "minimum_minutes")
	if fs == nil {
		return bokat.DurationOverride{}
	}
	var o bokat.DurationOverride
	_, fixed := fs["fixed_minutes"]
	_, per := fs["minutes_per_unit"]
	switch {
	case fixed && per:
		d.fail(n, path, "give fixed_minutes or minutes_per_unit, not both")
	case fixed:
		if f, ok := fs["minimum_minutes"]; ok {
			d.fail(f.key, join(path, "minimum_minutes"), "goes with minutes_per_unit only")
		}
		v, _ := d.integer(fs["fixed_minutes"].value, join(path, "fixed_minutes"), 15, 24*60)
		o.FixedMinutes = int(v)
	case per:
		if !perUnit {
			d.fail(fs["minutes_per_unit"].key, join(path, "minutes_per_unit"), "needs a per-unit service; give fixed_minutes")
			break
		}
		v, _ := d.integer(fs["minutes_per_unit"].value, join(path, "minutes_per_unit"), 1, 24*60)
		o.MinutesPerUnit = int(v)
		if f, ok := fs["minimum_minutes"]; ok {
			v, _ := d.integer(f.value, join(path, "minimum_minutes"), 0, 24*60)
			o.MinimumMinutes = int(v)
		}
	default:
		d.fail(n, path, "must give fixed_minutes or minutes_per_unit")
	}
	return o
}

func (d *decoder) blocked(n *yaml.Node, path, providerID string) []bokat.BlockedPeriod {
	var out []bokat.BlockedPeriod
	for i, item := range d.seq(n, path) {
		p := index(path, i)
		fs := d.fields(item, p, "start", "end", "note")
		if fs == nil {
			continue
		}
		var b bokat.BlockedPeriod
		ok := true
		if v := d.required(fs, item, p, "start"); v != nil {
			if s, sok := d.str(v, join(p, "start")); sok {
				t, err := parseInstant(s, false)
				if err != nil {
					d.fail(v, join(p, "start"), "%v", err)
					ok = false
				}
				b.Start = t
			} else {
				ok = false
			}
		} else {
			ok = false
		}
		if v := d.required(fs, item, p, "end"); v != nil {
			if s, sok := d.str(v, join(p, "end")); sok {
				t, err := parseInstant(s, true)
				if err != nil {
					d.fail(v, join(p, "end"), "%v", err)
					ok = false
				}
				b.End = t
			} else {
				ok = false
			}
		} else {
			ok = false
		}
		if f, has := fs["note"]; has {
			b.Note, _ = d.text(f.value, join(p, "note"), 0, 200)
		}
		if !ok {
			continue
		}
		if !b.Start.Before(b.End) {
			d.fail(item, p, "end must be after start")
			continue
		}
		b.Start, b.End = b.Start.UTC().Truncate(time.Millisecond), b.End.UTC().Truncate(time.Millisecond)
		b.ID = BlockedPeriodID(providerID, b.Start, b.End)
		out = append(out, b)
	}
	return out
}

// BlockedPeriodID is the stable id of a provider's blocked period: the same
// provider, start and end give the same id, so importing again matches it.
func BlockedPeriodID(providerID string, start, end time.Time) string {
	h := sha256.Sum256([]byte(providerID + "|" + strconv.FormatInt(start.UnixMilli(), 10) + "|" + strconv.FormatInt(end.UnixMilli(), 10)))
	return "blk_" + hex.EncodeToString(h[:10])
}

// parseInstant reads a blocked period's start or end: an RFC 3339 time with
// offset, a Stockholm wall-clock time "2026-12-21T08:00" (or with a space),
// or a date "2026-12-21": the start of that day, or for an end the end of
// that day (a date range is inclusive).
func parseInstant(s string, end bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, schedule.Stockholm()); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		day := schedule.NewDate(t.Year(), t.Month(), t.Day())
		if end {
			day = day.AddDays(1)
		}
		return day.At(0), nil
	}
	return time.Time{}, errors.New(`must be a date ("2026-12-21"), a Stockholm time ("2026-12-21T08:00") or an RFC 3339 time with offset`)
}
