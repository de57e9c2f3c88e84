// Package supply reads Bokat's supply file — providers, the postcodes they
// cover, their own prices per catalog service, job durations, weekly working
// hours and blocked periods — validates it against the catalog, and imports
// it into the store in one transaction. The format is documented in
// docs/supply-format.md; the demo supply of `serve --demo` is a file of this
// format embedded in the binary (demo.yaml).
//
// Parse reports every problem of a file at once, each with its line and
// column, and Import writes nothing when there is any. The file's structure
// is checked against a JSON Schema (supply.schema.json); the rules it cannot
// say, those that need the catalog or compare fields, are written in Go
// (checker). Importing the same file again changes nothing: providers are
// matched by id, and only what differs is written.
package supply

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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

// Defaults of optional provider fields.
const (
	DefaultMinNoticeMinutes = 120
	DefaultHorizonDays      = 14
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
// A file laid out as docs/supply-format.md shows is read provider by
// provider (see scan); any other is read whole (parseWhole), with the same
// answer.
func Parse(name string, data []byte, cat *catalog.Catalog) ([]bokat.ProviderSupply, error) {
	out, _, err := parse(name, data, cat)
	return out, err
}

// parse is Parse, also telling whether it read the file provider by
// provider (inParts) or as one node tree.
func parse(name string, data []byte, cat *catalog.Catalog) (out []bokat.ProviderSupply, inParts bool, err error) {
	err = scan(name, bytes.NewReader(data), cat, func(p bokat.ProviderSupply) error {
		out = append(out, p)
		return nil
	})
	switch {
	case errors.Is(err, errWhole):
		out, err = parseWhole(name, data, cat)
		return out, false, err
	case err != nil:
		return nil, true, err
	}
	return out, true, nil
}

// parseWhole is Parse of the file's whole YAML node tree at once.
func parseWhole(name string, data []byte, cat *catalog.Catalog) ([]bokat.ProviderSupply, error) {
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
	root := doc.Content[0]
	var conv converter
	value := conv.value(root)
	sch, _ := fileSchema()
	c := &checker{cat: cat, issues: schemaIssues(sch.Validate(value))}
	slices.SortStableFunc(c.issues, func(a, b issue) int { return compareTokens(a.at, b.at) })
	for _, r := range conv.twice {
		c.issues = append(c.issues, issue{at: append(r.at, r.key.Value), key: true, repeated: r.key, message: "given twice"})
	}
	c.flagged = map[string]bool{}
	for _, is := range c.issues {
		in := is.at
		if is.unknown || is.repeated != nil {
			in = in[:len(in)-1] // a problem of the mapping, not of the key's value
		}
		for _, p := range prefixes(in) {
			c.flagged[p] = true
		}
	}
	out := c.file(value)
	if problems := locateIssues(rootLocator(root), c.issues, c.skip); len(problems) > 0 {
		return nil, &Errors{File: name, Problems: problems}
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

// checker applies the rules the schema cannot say to the converted file,
// and decodes it.
type checker struct {
	cat *catalog.Catalog
	// issues holds the schema's issues, sorted by location, then the
	// rules' own in the order found.
	issues []issue
	// flagged holds the tokens, joined by "/", of every value with an issue
	// of the schema within.
	flagged map[string]bool
	// skip lists values whose schema issues a rule replaced (an unknown
	// service's prices, a price its pricing model does not use).
	skip [][]string
	// decoded holds lists and mappings decoded already, by identity: an
	// aliased value is decoded, and its problems reported, once.
	decoded map[any]any
}

func (c *checker) add(is issue) { c.issues = append(c.issues, is) }

func at(base []string, tokens ...string) []string {
	return append(slices.Clip(base), tokens...)
}

// once returns what decode returns for v, decoding a shared list or
// mapping only the first time.
func once[T any](c *checker, v any, decode func() T) T {
	if r, ok := v.(repeat); ok {
		v = r.value
	}
	rv := reflect.ValueOf(v)
	if (rv.Kind() != reflect.Map && rv.Kind() != reflect.Slice) || rv.Len() == 0 {
		return decode()
	}
	id := [2]any{reflect.TypeFor[T](), rv.UnsafePointer()}
	if out, ok := c.decoded[id]; ok {
		return out.(T)
	}
	out := decode()
	if c.decoded == nil {
		c.decoded = map[any]any{}
	}
	c.decoded[id] = out
	return out
}

func (c *checker) file(v any) []bokat.ProviderSupply {
	root, _ := as[map[string]any](v)
	list, _ := as[[]any](root["providers"])
	var out []bokat.ProviderSupply
	var index []int
	for i, item := range list {
		if m, ok := as[map[string]any](item); ok {
			out = append(out, c.provider(m, []string{"providers", strconv.Itoa(i)}))
			index = append(index, i)
		}
	}
	// Ids must be distinct; only providers without other problems count.
	unclean := map[string]bool{}
	for _, is := range c.issues {
		if len(is.at) >= 2 && is.at[0] == "providers" {
			unclean[is.at[1]] = true
		}
	}
	seen := map[string]int{}
	for k, p := range out {
		i := strconv.Itoa(index[k])
		if unclean[i] {
			continue
		}
		if first, dup := seen[p.ID]; dup {
			c.add(issue{at: []string{"providers", i, "id"}, message: fmt.Sprintf("duplicates the id of providers[%d]", first)})
			continue
		}
		seen[p.ID] = index[k]
	}
	return out
}

func (c *checker) provider(m map[string]any, base []string) bokat.ProviderSupply {
	p := bokat.ProviderSupply{Provider: bokat.Provider{
		Active: true, MinNoticeMinutes: DefaultMinNoticeMinutes, HorizonDays: DefaultHorizonDays,
		Mode: bokat.ModeLive, // supply files are the live realm's (docs/testing.md)
	}}
	p.ID, _ = text(m["id"])
	p.Name, _ = text(m["name"])
	p.City, _ = text(m["city"])
	p.RatingLabel, _ = text(m["rating_label"])
	p.Email, _ = text(m["email"])
	p.Phone, _ = text(m["phone"])
	if b, ok := as[bool](m["active"]); ok {
		p.Active = b
	}
	if n, ok := integer(m["min_notice_minutes"]); ok {
		p.MinNoticeMinutes = int(n)
	}
	if n, ok := integer(m["horizon_days"]); ok {
		p.HorizonDays = int(n)
	}
	if v, ok := m["postcodes"]; ok {
		p.Postcodes = once(c, v, func() []bokat.PostcodeRange { return postcodes(v) })
	}
	if v, ok := m["hours"]; ok {
		p.Hours = once(c, v, func() []bokat.WorkingRange { return c.hours(v, at(base, "hours")) })
	}
	if v, ok := m["services"]; ok {
		p.Services = once(c, v, func() []bokat.ProviderService { return c.services(v, at(base, "services")) })
	}
	p.Blocked = c.blocked(m["blocked"], at(base, "blocked"), p.ID)
	p.Calendars = c.calendars(m["calendars"], at(base, "calendars"))
	return p
}

// calendars reads a provider's calendar subscriptions; the same address
// twice is a problem.
func (c *checker) calendars(v any, base []string) []bokat.CalendarSubscription {
	items, _ := as[[]any](v)
	var out []bokat.CalendarSubscription
	seen := map[string]int{}
	for i, item := range items {
		m, ok := as[map[string]any](item)
		if !ok {
			continue
		}
		u, ok := text(m["url"])
		if !ok || checkCalendarURL(u) != nil {
			continue
		}
		if first, dup := seen[u]; dup {
			c.add(issue{at: at(at(base, strconv.Itoa(i)), "url"), message: fmt.Sprintf("repeats the address of calendars[%d]", first)})
			continue
		}
		seen[u] = i
		rule, _ := text(m["rule"])
		out = append(out, bokat.CalendarSubscription{URL: u, Rule: rule})
	}
	return out
}

// maxCalendarURLLen bounds a calendar address, as a webhook URL is bounded.
const maxCalendarURLLen = 2048

// checkCalendarURL accepts the address of an iCalendar feed as far as the
// file alone can tell: absolute, https (http and webcal are accepted here;
// the import's guard refuses http in production), no user information.
// Whether its host is public is checked when the calendar is subscribed.
func checkCalendarURL(s string) error {
	if len(s) > maxCalendarURLLen {
		return fmt.Errorf("is longer than %d characters", maxCalendarURLLen)
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return errors.New("is not an absolute address like https://calendar.google.com/calendar/ical/…/basic.ics")
	}
	switch u.Scheme {
	case "https", "http", "webcal":
	default:
		return errors.New("must be an https:// (or webcal://) address")
	}
	if u.User != nil {
		return errors.New("must not carry user information (user:password@)")
	}
	return nil
}

// Limits of provider contact data. An e-mail address is at most 254
// characters (RFC 5321's path limit less the angle brackets).
const (
	maxEmailLen  = 254
	maxPhoneLen  = 40
	minPhoneDigs = 5
	maxPhoneDigs = 15 // E.164
)

// checkEmail accepts a provider's e-mail address: one bare address
// ("bokningar@firma.se"), without a display name, angle brackets or
// comments, as net/mail parses it.
func checkEmail(s string) error {
	if err := checkLength(s, 3, maxEmailLen); err != nil {
		return err
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return errors.New("is not an e-mail address; give one bare address like bokningar@firma.se, without a name or <>")
	}
	return nil
}

// checkPhone accepts a provider's phone number: digits with optional
// spaces, hyphens, parentheses and a leading +, 5 to 15 digits.
func checkPhone(s string) error {
	if err := checkLength(s, minPhoneDigs, maxPhoneLen); err != nil {
		return err
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
		return fmt.Errorf("is not a phone number; give %d to %d digits, optionally with a leading +, spaces, hyphens or parentheses",
			minPhoneDigs, maxPhoneDigs)
	}
	return nil
}

func checkLength(s string, lo, hi int) error {
	if n := utf8.RuneCountInString(s); n < lo || n > hi {
		return fmt.Errorf("must be %d to %d characters", lo, hi)
	}
	return nil
}

var providerIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

func checkProviderID(s string) error {
	if !providerIDPattern.MatchString(s) {
		return errors.New("must be 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter or digit")
	}
	if strings.HasPrefix(s, bokat.TestProviderIDPrefix) {
		return errors.New("must not start with " + bokat.TestProviderIDPrefix + ": those ids are the test realm's")
	}
	return nil
}

// postcodes decodes coverage entries (checked by the schema).
func postcodes(v any) []bokat.PostcodeRange {
	list, _ := as[[]any](v)
	var out []bokat.PostcodeRange
	for _, item := range list {
		if s, ok := text(item); ok {
			if r, err := ParsePostcodeRange(s); err == nil {
				out = append(out, r)
			}
		}
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

// weekdayKeys are the keys of working hours, in the order they are read,
// with the days each gives.
var weekdayKeys = []struct {
	key  string
	days []time.Weekday
}{
	{"weekdays", []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}},
	{"monday", []time.Weekday{time.Monday}}, {"tuesday", []time.Weekday{time.Tuesday}},
	{"wednesday", []time.Weekday{time.Wednesday}}, {"thursday", []time.Weekday{time.Thursday}},
	{"friday", []time.Weekday{time.Friday}}, {"saturday", []time.Weekday{time.Saturday}},
	{"sunday", []time.Weekday{time.Sunday}},
}

// hours decodes weekly working hours: weekday names (or "weekdays" for
// Monday to Friday) mapped to lists of "HH:MM-HH:MM" ranges. A day must be
// given once, and its ranges must not overlap.
func (c *checker) hours(v any, base []string) []bokat.WorkingRange {
	m, ok := as[map[string]any](v)
	if !ok {
		return nil
	}
	before := len(c.issues)
	var week schedule.WeeklyHours
	var given [7]bool
	for _, wk := range weekdayKeys {
		list, ok := m[wk.key]
		if !ok {
			continue
		}
		var ranges []schedule.ClockRange
		items, _ := as[[]any](list)
		for _, item := range items {
			if s, ok := text(item); ok {
				if r, err := parseClockRange(s); err == nil {
					ranges = append(ranges, r)
				}
			}
		}
		for _, day := range wk.days {
			if given[day] {
				c.add(issue{at: at(base, wk.key), key: true, message: fmt.Sprintf("%s is also given by \"weekdays\"", strings.ToLower(day.String()))})
				continue
			}
			given[day] = true
			week[day] = append(week[day], ranges...)
		}
	}
	var out []bokat.WorkingRange
	for day, ranges := range week {
		slices.SortFunc(ranges, func(a, b schedule.ClockRange) int { return a.Start - b.Start })
		for i, r := range ranges {
			if i > 0 && r.Start < ranges[i-1].End {
				c.add(issue{at: base, message: fmt.Sprintf("%s: %s overlaps %s", strings.ToLower(time.Weekday(day).String()), r, ranges[i-1])})
			}
			out = append(out, bokat.WorkingRange{Weekday: time.Weekday(day), StartMinute: r.Start, EndMinute: r.End})
		}
	}
	if len(out) == 0 && len(c.issues) == before && !c.flagged[strings.Join(base, "/")] {
		c.add(issue{at: base, message: "must give at least one working range; a provider without hours has no slots"})
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

// services decodes a provider's services and checks them against the
// catalog: each service once, priced as its pricing model says.
func (c *checker) services(v any, base []string) []bokat.ProviderService {
	items, _ := as[[]any](v)
	seen := map[string]int{}
	var out []bokat.ProviderService
	for i, item := range items {
		p := at(base, strconv.Itoa(i))
		m, ok := as[map[string]any](item)
		if !ok {
			continue
		}
		id, ok := text(m["service_id"])
		svc, known := c.cat.Service(id)
		_, dup := seen[id]
		switch {
		case !ok: // the schema says what is wrong
		case !known:
			c.add(issue{at: at(p, "service_id"), message: fmt.Sprintf("%q is not a service of the catalog; see the service_id of each fixed_price_seed in GET /v1/capabilities", id)})
		case dup:
			c.add(issue{at: at(p, "service_id"), message: fmt.Sprintf("is already offered by %s[%d]", pathOf(base), seen[id])})
		}
		if !ok || !known || dup {
			for _, name := range []string{"price_sek", "unit_price_sek", "minimum_charge_sek", "labour_percent", "duration"} {
				c.skip = append(c.skip, at(p, name))
			}
			continue
		}
		seen[id] = i
		s := bokat.ProviderService{ServiceID: id}
		model := svc.PricingModel
		require := func(name string) {
			if _, ok := m[name]; !ok {
				c.add(issue{at: p, field: name, message: "is required"})
			}
		}
		forbid := func(name, why string) {
			if _, ok := m[name]; ok {
				c.add(issue{at: at(p, name), key: true, message: fmt.Sprintf("is not used by %s services (%s); %s", model, id, why)})
				c.skip = append(c.skip, at(p, name))
			}
		}
		if model.PerUnit() {
			require("unit_price_sek")
			forbid("price_sek", "give unit_price_sek per "+svc.UnitEN)
			s.UnitPriceSEK, _ = integer(m["unit_price_sek"])
			s.MinimumChargeSEK, _ = integer(m["minimum_charge_sek"])
		} else {
			require("price_sek")
			forbid("unit_price_sek", "give price_sek")
			forbid("minimum_charge_sek", "give price_sek")
			s.PriceSEK, _ = integer(m["price_sek"])
		}
		if d, ok := as[map[string]any](m["duration"]); ok {
			s.Duration = c.duration(d, at(p, "duration"), model.PerUnit())
		}
		// labour_percent is of the amount an option shows, whatever the
		// pricing model; absent means "not stated" (no ROT/RUT estimate).
		if n, ok := integer(m["labour_percent"]); ok {
			s.Labour = bokat.StatedLabour(int(n))
		}
		out = append(out, s)
	}
	return out
}

// duration decodes a service's duration override: fixed minutes, or for a
// per-unit service minutes per unit with an optional minimum.
func (c *checker) duration(m map[string]any, base []string, perUnit bool) bokat.DurationOverride {
	var o bokat.DurationOverride
	_, fixed := m["fixed_minutes"]
	_, per := m["minutes_per_unit"]
	_, minimum := m["minimum_minutes"]
	skip := func(names ...string) {
		for _, name := range names {
			c.skip = append(c.skip, at(base, name))
		}
	}
	switch {
	case fixed && per:
		c.add(issue{at: base, message: "give fixed_minutes or minutes_per_unit, not both"})
		skip("fixed_minutes", "minutes_per_unit", "minimum_minutes")
	case fixed:
		if minimum {
			c.add(issue{at: at(base, "minimum_minutes"), key: true, message: "goes with minutes_per_unit only"})
			skip("minimum_minutes")
		}
		n, _ := integer(m["fixed_minutes"])
		o.FixedMinutes = int(n)
	case per && !perUnit:
		c.add(issue{at: at(base, "minutes_per_unit"), key: true, message: "needs a per-unit service; give fixed_minutes"})
		skip("minutes_per_unit", "minimum_minutes")
	case per:
		n, _ := integer(m["minutes_per_unit"])
		low, _ := integer(m["minimum_minutes"])
		o.MinutesPerUnit, o.MinimumMinutes = int(n), int(low)
	default:
		c.add(issue{at: base, message: "must give fixed_minutes or minutes_per_unit"})
		skip("minimum_minutes")
	}
	return o
}

// blocked decodes a provider's blocked periods; each must end after it
// starts.
func (c *checker) blocked(v any, base []string, providerID string) []bokat.BlockedPeriod {
	items, _ := as[[]any](v)
	var out []bokat.BlockedPeriod
	for i, item := range items {
		m, ok := as[map[string]any](item)
		if !ok {
			continue
		}
		start, okStart := instant(m["start"], false)
		end, okEnd := instant(m["end"], true)
		if !okStart || !okEnd {
			continue
		}
		if !start.Before(end) {
			c.add(issue{at: at(base, strconv.Itoa(i)), message: "end must be after start"})
			continue
		}
		b := bokat.BlockedPeriod{Start: start.UTC().Truncate(time.Millisecond), End: end.UTC().Truncate(time.Millisecond)}
		b.Note, _ = text(m["note"])
		b.ID = BlockedPeriodID(providerID, b.Start, b.End)
		out = append(out, b)
	}
	return out
}

func instant(v any, end bool) (time.Time, bool) {
	s, ok := text(v)
	if !ok {
		return time.Time{}, false
	}
	t, err := parseInstant(s, end)
	return t, err == nil
}

// BlockedPeriodID is the stable id of a provider's blocked period: the same
// provider, start and end give the same id, so importing again matches it.
// The provider's id leads, so that a provider's periods lie together in the
// store's index of ids (a large import writes few of its pages per
// provider, not one per period).
func BlockedPeriodID(providerID string, start, end time.Time) string {
	h := sha256.Sum256([]byte(providerID + "|" + strconv.FormatInt(start.UnixMilli(), 10) + "|" + strconv.FormatInt(end.UnixMilli(), 10)))
	return bokat.BlockedPeriodIDPrefix + providerID + "_" + hex.EncodeToString(h[:10])
}

// parseInstant reads a blocked period's start or end: an RFC 3339 time with
// offset, a Stockholm wall-clock time "2026-12-21T08:00" (or with a space),
// or a date "2026-12-21": the start of that day, or for an end the end of
// that day (a date range is inclusive).
func parseInstant(s string, end bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, ok := parseStockholmMinute(s); ok {
		return t, nil
	}
	return parseInstantByLayout(s, end)
}

// parseInstantByLayout is parseInstant without its fast path: every form
// tried by layout.
func parseInstantByLayout(s string, end bool) (time.Time, error) {
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

// parseStockholmMinute reads a Stockholm wall-clock time of the form
// "2026-12-21T08:00" (or with a space), as the "2006-01-02T15:04" layout
// of parseInstant reads it, without the allocations of time.Parse's
// failed tries: a national file has two per blocked period, 4 million in
// all. It answers false for anything else, left to parseInstant's layouts
// (and their messages).
func parseStockholmMinute(s string) (time.Time, bool) {
	if len(s) != len("2006-01-02T15:04") || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' {
		return time.Time{}, false
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for i := from; i < to; i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || month < 1 || month > 12 || day < 1 ||
		day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() || hour > 23 || minute > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, 0, 0, schedule.Stockholm()), true
}
