package supply

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"bokat"
	"bokat/internal/catalog"
)

// Reading a supply file provider by provider.
//
// A supply file of tens of thousands of providers is hundreds of megabytes
// of YAML; its whole node tree, and the validator's copy of it, would take
// gigabytes. So a file laid out as docs/supply-format.md shows — a block
// list under a top-level "providers:" line, each provider starting with
// "- " at the list's indentation — is read in parts: each provider's lines
// are parsed, converted, validated and decoded on their own, and the lines
// around the list (version, any other top-level key) are parsed with the
// list's items replaced by placeholders, then checked against the schema of
// the top level alone. Each part keeps its lines and columns, so every
// problem is reported where, and as, the whole file's reading reports it.
//
// Whatever could make a part read differently from the whole — an alias
// of an anchor in another part, a line break other than LF or CR LF, a
// flow-style list, document markers, a part that does not parse — makes
// scan answer errWhole, and the file is read whole (parseWhole) instead.

// errWhole says a file is not laid out to be read in parts.
var errWhole = errors.New("supply: the file is read whole")

// providersLine is the line that opens the providers list of a file read in
// parts.
var providersLine = regexp.MustCompile(`^providers:[ \t]*(#.*)?\r?\n?$`)

// scan reads a supply file from r in parts (see above) and calls fn with
// each provider that has no problem, in file order, as it is read, until
// the first problem: a file with one is not stored, so nothing after it
// is given to fn (it is still read to the end, for every problem). It
// returns every problem of the file as *Errors, errWhole when the file is
// not laid out to be read in parts, or the first error of r or fn.
func scan(name string, r io.Reader, cat *catalog.Catalog, fn func(bokat.ProviderSupply) error) error {
	s := scanner{name: name, cat: cat, fn: fn, seen: map[string]int{}, indent: -1}
	return s.run(bufio.NewReaderSize(r, 1<<16))
}

// Where scan is in the file.
const (
	inHead      = iota // before the providers line
	beforeItems        // after it, before its first item
	inItems            // in the list
	inTail             // after the list
)

// scanner reads a file in parts: one goroutine reads its lines (read),
// workers parse and check each provider's part (part.check), and the
// caller's goroutine takes the parts in file order (take).
type scanner struct {
	name string
	cat  *catalog.Catalog
	fn   func(bokat.ProviderSupply) error

	// The reader's state.
	state  int
	line   int // the number of the line read last
	indent int // the column (0-based) of the list's "-"
	// skeleton is the file with each provider's lines replaced: its first
	// by a placeholder item "- 0", the others by empty lines.
	skeleton bytes.Buffer
	item     *part        // the provider being read
	starts   []int        // the first line of each provider
	parts    chan<- *part // to the workers
	order    chan<- *part // to take, in file order
	stop     <-chan struct{}

	// take's state.
	seen      map[string]int
	problems  []Problem
	expansion int // the nodes aliases repeat, so far
}

// part is one provider's lines, and what checking them found.
type part struct {
	index, start, indent int
	lines                bytes.Buffer
	done                 chan struct{} // closed when checked

	whole     bool // the part does not read as one list item
	expansion int
	item      *yaml.Node
	provider  bokat.ProviderSupply
	problems  []Problem
	clean     bool
}

// partsAhead bounds the parts read ahead of the one taken.
const partsAhead = 64

func (s *scanner) run(r *bufio.Reader) error {
	parts, order, stop := make(chan *part, partsAhead), make(chan *part, partsAhead), make(chan struct{})
	s.parts, s.order, s.stop = parts, order, stop
	for range max(1, runtime.GOMAXPROCS(0)) {
		go func() {
			for p := range parts {
				p.check(s.cat)
				close(p.done)
			}
		}()
	}
	var readErr error
	go func() {
		defer close(order)
		defer close(parts)
		readErr = s.read(r)
	}()
	var err error
	for p := range order {
		<-p.done
		if err != nil {
			continue // drain what was read ahead
		}
		if err = s.take(p); err != nil {
			close(stop)
		}
	}
	if err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	return s.finish()
}

// read reads the lines of the file and sends its providers' parts.
func (s *scanner) read(r *bufio.Reader) error {
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := slices.Clone(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			s.line++
			if err := s.add(line); err != nil {
				return err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read the supply file: %w", err)
		}
	}
	if s.state == inItems {
		return s.end()
	}
	return nil
}

// add takes the next line of the file.
func (s *scanner) add(line []byte) error {
	if !plainLineBreaks(line) {
		return errWhole
	}
	switch s.state {
	case inHead:
		s.skeleton.Write(line)
		if providersLine.Match(line) {
			s.state = beforeItems
		}
		return nil
	case beforeItems:
		if blankOrComment(line) {
			s.skeleton.Write(line)
			return nil
		}
		n := spaces(line)
		if !itemStart(line, n) {
			return errWhole // a flow list, an empty one or no list
		}
		s.indent, s.state = n, inItems
		s.begin(line)
		return nil
	case inItems:
		switch {
		case itemStart(line, s.indent):
			if err := s.end(); err != nil {
				return err
			}
			s.begin(line)
		case blankOrComment(line) || line[0] == '\t' || spaces(line) > s.indent:
			s.item.lines.Write(line)
			s.skeleton.WriteByte('\n')
		default:
			if err := s.end(); err != nil {
				return err
			}
			s.state = inTail
			return s.tail(line)
		}
		return nil
	default:
		return s.tail(line)
	}
}

func (s *scanner) tail(line []byte) error {
	if bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")) || line[0] == '%' {
		return errWhole // another document, or a directive
	}
	s.skeleton.Write(line)
	return nil
}

// begin starts the provider whose first line is line.
func (s *scanner) begin(line []byte) {
	s.item = &part{index: len(s.starts), start: s.line, indent: s.indent, done: make(chan struct{})}
	s.item.lines.Write(line)
	s.starts = append(s.starts, s.line)
	s.skeleton.WriteString(fmt.Sprintf("%*s- 0\n", s.indent, ""))
}

// end sends the provider read to be checked, and to be taken in order.
func (s *scanner) end() error {
	select {
	case s.parts <- s.item:
	case <-s.stop:
		return errStopped
	}
	select {
	case s.order <- s.item:
		return nil
	case <-s.stop:
		return errStopped
	}
}

// errStopped ends reading once take has failed.
var errStopped = errors.New("supply: stopped")

// check parses the part and checks its provider.
func (p *part) check(cat *catalog.Catalog) {
	var doc yaml.Node
	if err := yaml.Unmarshal(p.lines.Bytes(), &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		p.whole = true
		return
	}
	list := doc.Content[0]
	if list.Kind != yaml.SequenceNode || list.Style&yaml.FlowStyle != 0 || len(list.Content) != 1 ||
		list.Line != 1 || list.Column != p.indent+1 || list.Anchor != "" || list.Tag != "!!seq" {
		p.whole = true
		return
	}
	p.lines = bytes.Buffer{}
	shiftLines(list, p.start-1)
	if p.expansion = aliasExpansion(&doc); p.expansion > MaxAliasExpansion {
		return
	}
	p.item = list.Content[0]
	p.provider, p.problems, p.clean = checkItem(cat, p.index, p.item)
}

// take takes the next provider's checked part, in file order.
func (s *scanner) take(p *part) error {
	if p.whole {
		return errWhole
	}
	s.expansion = min(s.expansion+p.expansion, MaxAliasExpansion+1)
	if s.expansion > MaxAliasExpansion {
		return nil // reported by finish, unless the file is read whole
	}
	s.problems = append(s.problems, p.problems...)
	if !p.clean {
		return nil
	}
	if first, dup := s.seen[p.provider.ID]; dup {
		s.problems = append(s.problems, locateIssues(itemLocator(p.index, p.item),
			[]issue{{at: []string{"providers", strconv.Itoa(p.index), "id"}, message: fmt.Sprintf("duplicates the id of providers[%d]", first)}}, nil)...)
		return nil
	}
	s.seen[p.provider.ID] = p.index
	if s.fn != nil && len(s.problems) == 0 {
		return s.fn(p.provider)
	}
	return nil
}

// finish reads the top level of the file, once every provider is read.
func (s *scanner) finish() error {
	if s.state == inHead || s.state == beforeItems {
		return errWhole
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(s.skeleton.Bytes(), &doc); err != nil {
		return errWhole
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return errWhole
	}
	root := doc.Content[0]
	if list := member(root, "providers"); list == nil || !s.placeholders(list) {
		return errWhole
	}
	if s.expansion = min(s.expansion+aliasExpansion(&doc), MaxAliasExpansion+1); s.expansion > MaxAliasExpansion {
		return &Errors{File: s.name, Problems: []Problem{aliasProblem()}}
	}
	var conv converter
	value := conv.value(root)
	sch, _ := partSchemas()
	c := &checker{cat: s.cat, issues: schemaIssues(sch.Validate(value))}
	slices.SortStableFunc(c.issues, func(a, b issue) int { return compareTokens(a.at, b.at) })
	for _, r := range conv.twice {
		c.issues = append(c.issues, issue{at: append(r.at, r.key.Value), key: true, repeated: r.key, message: "given twice"})
	}
	problems := append(locateIssues(rootLocator(root), c.issues, nil), s.problems...)
	if len(problems) == 0 {
		return nil
	}
	// The top level's problems lie on its own lines, apart from the
	// providers' lines: ordering by place keeps each part's order.
	slices.SortStableFunc(problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return &Errors{File: s.name, Problems: problems}
}

// placeholders reports whether list is the block list of the skeleton's
// placeholder items, one where each provider starts.
func (s *scanner) placeholders(list *yaml.Node) bool {
	if list.Kind != yaml.SequenceNode || list.Style&yaml.FlowStyle != 0 || list.Anchor != "" || list.Tag != "!!seq" ||
		len(list.Content) != len(s.starts) {
		return false
	}
	for i, n := range list.Content {
		if n.Kind != yaml.ScalarNode || n.Value != "0" || n.Tag != "!!int" || n.Line != s.starts[i] || n.Column != s.indent+3 {
			return false
		}
	}
	return true
}

// checkItem converts, validates and decodes providers[i] of a file, whose
// node is item. It returns the provider, its problems in file order, and
// whether it has none (counting those a rule replaced).
func checkItem(cat *catalog.Catalog, i int, item *yaml.Node) (bokat.ProviderSupply, []Problem, bool) {
	base := []string{"providers", strconv.Itoa(i)}
	conv := converter{at: slices.Clone(base), place: []string{"providers", "*"}}
	value := conv.value(item)
	_, sch := partSchemas()
	issues := schemaIssues(sch.Validate(value))
	for k := range issues {
		issues[k].at = append(slices.Clip(base), issues[k].at...)
	}
	c := &checker{cat: cat, issues: issues}
	slices.SortStableFunc(c.issues, func(a, b issue) int { return compareTokens(a.at, b.at) })
	for _, r := range conv.twice {
		c.issues = append(c.issues, issue{at: append(r.at, r.key.Value), key: true, repeated: r.key, message: "given twice"})
	}
	c.flagged = map[string]bool{}
	for _, is := range c.issues {
		in := is.at
		if is.unknown || is.repeated != nil {
			in = in[:len(in)-1]
		}
		for _, p := range prefixes(in) {
			c.flagged[p] = true
		}
	}
	var p bokat.ProviderSupply
	if m, ok := as[map[string]any](value); ok {
		p = c.provider(m, base)
	}
	if len(c.issues) == 0 {
		return p, nil, true
	}
	return p, locateIssues(itemLocator(i, item), c.issues, c.skip), false
}

// itemLocator locates the tokens of providers[i] from its node.
func itemLocator(i int, item *yaml.Node) locator {
	path := index("providers", strconv.Itoa(i))
	return func(tokens []string, key bool, within func(*yaml.Node)) (*yaml.Node, string, bool) {
		return locateFrom(item, path, tokens[2:], key, within)
	}
}

// shiftLines adds offset to the line of n and every node within.
func shiftLines(n *yaml.Node, offset int) {
	n.Line += offset
	for _, c := range n.Content {
		shiftLines(c, offset)
	}
}

// plainLineBreaks reports whether line has no line break but its ending LF
// or CR LF: YAML also ends lines at a lone CR, NEL, LS and PS.
func plainLineBreaks(line []byte) bool {
	body := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	return bytes.IndexByte(body, '\r') < 0 && bytes.IndexByte(body, '\n') < 0 &&
		!bytes.Contains(body, []byte("\u0085")) && !bytes.Contains(body, []byte("\u2028")) && !bytes.Contains(body, []byte("\u2029"))
}

// spaces returns the number of spaces line starts with.
func spaces(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// blankOrComment reports whether line holds only spaces and tabs, or a
// comment after them.
func blankOrComment(line []byte) bool {
	rest := bytes.TrimLeft(line, " \t")
	return len(rest) == 0 || rest[0] == '\n' || rest[0] == '\r' || rest[0] == '#'
}

// itemStart reports whether line starts a list item at column indent: n
// spaces, then "-" and a space or the line's end.
func itemStart(line []byte, indent int) bool {
	if spaces(line) != indent || len(line) <= indent || line[indent] != '-' {
		return false
	}
	rest := line[indent+1:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\n' || rest[0] == '\r'
}

func aliasProblem() Problem {
	return Problem{Message: fmt.Sprintf(
		"aliases repeat more than %d YAML nodes; write such lists out, or cover postcodes with ranges (\"111-118\")",
		MaxAliasExpansion)}
}

// File is what an import read of a supply file, besides what it stored.
type File struct {
	Name string
	// Providers is the number of providers of the file.
	Providers int
	// Calendars lists every provider of the file with its id and calendars
	// only (none when it names none), so that an import can also unsubscribe
	// the calendars the file no longer names.
	Calendars []bokat.ProviderSupply
}

// add counts p, a provider of the file, and keeps its calendars.
func (f *File) add(p bokat.ProviderSupply) {
	f.Providers++
	f.Calendars = append(f.Calendars, bokat.ProviderSupply{Provider: bokat.Provider{ID: p.ID}, Calendars: p.Calendars})
}
