package schedule

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// folded is free text prepared for matching: lower case, å/ä folded to a, ö
// to o (so "nasta vecka" reads like "nästa vecka"), dashes to '-', and runs of
// white space collapsed to one space. pos maps every byte of norm back to the
// original text, so a matched phrase can be reported as the customer wrote it.
type folded struct {
	orig string
	norm string
	pos  []int // len(norm)+1 entries; pos[i] is the offset in orig of the rune that produced norm[i]
}

func fold(s string) folded {
	s = strings.TrimSpace(s)
	var b strings.Builder
	pos := make([]int, 0, len(s)+1)
	space := false
	for i, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			pos = append(pos, i)
		}
		space = false
		r = unicode.ToLower(r)
		switch r {
		case 'å', 'ä', 'à', 'á', 'â':
			r = 'a'
		case 'ö', 'ø', 'ó', 'ò', 'ô':
			r = 'o'
		case 'é', 'è', 'ê', 'ë':
			r = 'e'
		case 'ü', 'ú', 'ù':
			r = 'u'
		case '–', '—', '‒', '−', '‐':
			r = '-'
		}
		n, _ := b.WriteRune(r)
		for range n {
			pos = append(pos, i)
		}
	}
	pos = append(pos, len(s))
	return folded{orig: s, norm: b.String(), pos: pos}
}

// original returns the text the customer wrote for norm[start:end].
func (f folded) original(start, end int) string {
	return strings.TrimSpace(f.orig[f.pos[start]:f.pos[end]])
}

// span is a byte range [start, end) of folded.norm.
type span struct{ start, end int }

func (s span) overlaps(o span) bool { return s.start < o.end && o.start < s.end }

// isWordRune reports whether r continues a word or a number.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// atBoundary reports whether norm[start:end] neither starts nor ends inside a
// word. (RE2's \b knows only ASCII letters, so boundaries are checked here.)
func atBoundary(norm string, start, end int) bool {
	if start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(norm[:start]); isWordRune(r) {
			return false
		}
	}
	if end < len(norm) {
		if r, _ := utf8.DecodeRuneInString(norm[end:]); isWordRune(r) {
			return false
		}
	}
	return true
}

// findAll returns the submatch indexes (absolute in norm) of the
// non-overlapping matches of re that are whole words, leftmost first. A match
// that fails the boundary test is retried one rune further on.
func findAll(re *regexp.Regexp, norm string) [][]int {
	var out [][]int
	for from := 0; from <= len(norm); {
		loc := re.FindStringSubmatchIndex(norm[from:])
		if loc == nil {
			break
		}
		for i := range loc {
			if loc[i] >= 0 {
				loc[i] += from
			}
		}
		start, end := loc[0], loc[1]
		if end > start && atBoundary(norm, start, end) {
			out = append(out, loc)
			from = end
			continue
		}
		_, size := utf8.DecodeRuneInString(norm[start:])
		if size == 0 {
			break
		}
		from = start + size
	}
	return out
}

// group returns submatch i of a findAll result, or "" when it did not take part.
func group(norm string, loc []int, i int) string {
	if 2*i+1 >= len(loc) || loc[2*i] < 0 {
		return ""
	}
	return norm[loc[2*i]:loc[2*i+1]]
}
