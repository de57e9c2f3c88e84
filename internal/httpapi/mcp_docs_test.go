package httpapi

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsNameTheMCPTools: the README's sentence on the MCP tools and the
// tool table of docs/mcp.md name exactly the tools the server lists, and
// the README counts them right.
func TestDocsNameTheMCPTools(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	s := e.mcpConnect(t, mcpEras[0], e.token)
	var want []string
	for name := range s.tools {
		want = append(want, name)
	}
	slices.Sort(want)

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)\n(\\w+) tools \\((`[a-z_]+`(?:,\\s*`[a-z_]+`)*)\\)").FindStringSubmatch(string(readme))
	if m == nil {
		t.Fatal("README has no sentence \"N tools (`a`, `b`, …)\"")
	}
	named := backticked(m[2])
	if !slices.Equal(named, want) {
		t.Errorf("README names the tools %v, the server lists %v", named, want)
	}
	counts := []string{"No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven", "Twelve"}
	if len(want) >= len(counts) || m[1] != counts[len(want)] {
		t.Errorf("README says %q tools; the server lists %d", m[1], len(want))
	}

	doc, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(doc), "\n## Tools\n")
	table, _, _ = strings.Cut(table, "\n\n")
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(table, -1) {
		rows = append(rows, m[1])
	}
	slices.Sort(rows)
	if !slices.Equal(rows, want) {
		t.Errorf("docs/mcp.md's tool table has %v, the server lists %v", rows, want)
	}
}

// backticked returns the `quoted` names of s, sorted.
func backticked(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}
