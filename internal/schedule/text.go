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

// fragment is a run of words of a text that no phrase covers, as the
// customer wrote it; start is its offset in folded.norm.
type fragment struct {
	start int
	text  string
}

// fillers are the words that never need reading: connectives, courtesy
// and words that only soften a wish ("helst", "preferably"). They are
// folded as the text is (å, ä to a, ö to o).
var fillers = map[string]bool{
	// Swedish
	"och": true, "eller": true, "men": true, "samt": true, "helst": true, "garna": true, "tack": true,
	"om": true, "mojligt": true, "pa": true, "i": true, "kl": true, "klockan": true, "den": true,
	"vid": true, "typ": true, "sa": true, "da": true, "kan": true, "ni": true, "du": true, "vi": true,
	"det": true, "gar": true, "passar": true, "bra": true, "funkar": true, "fungerar": true,
	"nagon": true, "nan": true, "gang": true, "tid": true, "en": true, "ett": true, "ar": true,
	"under": true, "till": true, "av": true, "ocksa": true, "annars": true, "kanske": true,
	"hej": true, "boka": true, "komma": true, "tiden": true, "tider": true, "ledig": true,
	"att": true, "ja": true, "nej": true, "vill": true, "ha": true, "over": true, "direkt": true,
	"dag": true, "man": true, "garna.": true,
	// English
	"and": true, "or": true, "but": true, "preferably": true, "ideally": true, "please": true,
	"thanks": true, "thank": true, "you": true, "if": true, "possible": true, "on": true, "at": true,
	"in": true, "the": true, "a": true, "an": true, "we": true, "can": true, "could": true,
	"would": true, "be": true, "is": true, "it": true, "any": true, "some": true, "sometime": true,
	"time": true, "maybe": true, "perhaps": true, "works": true, "good": true, "fine": true,
	"ok": true, "okay": true, "for": true, "us": true, "me": true, "of": true, "to": true,
	"also": true, "hi": true, "book": true, "come": true, "like": true,
	"best": true, "better": true, "yes": true, "no": true, "want": true, "this": true, "pls": true,
	"day": true, "when": true, "we're": true, "i'm": true, "it's": true, "that's": true,
}

// leftover returns the runs of words of f that no part covers, split at
// punctuation, each as the customer wrote it, without the fillers at
// either end; a run of fillers only is left out.
func leftover(f folded, parts []part) []fragment {
	covered := func(i int) bool {
		for _, p := range parts {
			if i >= p.span.start && i < p.span.end {
				return true
			}
		}
		return false
	}
	var out []fragment
	type word struct{ start, end int }
	var run []word
	flush := func() {
		for len(run) > 0 && fillers[f.norm[run[0].start:run[0].end]] {
			run = run[1:]
		}
		for len(run) > 0 && fillers[f.norm[run[len(run)-1].start:run[len(run)-1].end]] {
			run = run[:len(run)-1]
		}
		if len(run) > 0 {
			out = append(out, fragment{start: run[0].start, text: f.original(run[0].start, run[len(run)-1].end)})
		}
		run = run[:0]
	}
	norm := f.norm
	for i := 0; i < len(norm); {
		r, size := utf8.DecodeRuneInString(norm[i:])
		if !isWordRune(r) {
			if r != ' ' && r != '-' || covered(i) {
				flush() // punctuation or a phrase ends a run
			}
			i += size
			continue
		}
		j := i
		for j < len(norm) {
			r, size := utf8.DecodeRuneInString(norm[j:])
			if r == '\'' || r == '’' { // "we're" is one word
				if next, _ := utf8.DecodeRuneInString(norm[j+size:]); isWordRune(next) {
					j += size
					continue
				}
			}
			if !isWordRune(r) {
				break
			}
			j += size
		}
		if covered(i) {
			flush()
		} else {
			run = append(run, word{i, j})
		}
		i = j
	}
	flush()
	return out
}
