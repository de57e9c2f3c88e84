package schedule

import (
	"strings"
	"testing"
)

// TestHolidayPatterns checks that every written form of every holiday reads
// as that holiday, and holds one of holidayWords (without which the
// expression is skipped).
func TestHolidayPatterns(t *testing.T) {
	t.Parallel()
	for i, h := range holidays {
		for _, alt := range strings.Split(h.pattern, "|") {
			// "jul ?afton" is written "julafton" and "jul afton".
			short, long := alt, strings.ReplaceAll(alt, "?", "")
			for strings.Contains(short, "?") {
				q := strings.Index(short, "?")
				short = short[:q-1] + short[q+1:]
			}
			for _, form := range []string{short, long} {
				parts := findParts(form)
				if len(parts) != 1 || parts[0].day != dayHoliday || parts[0].hol != &holidays[i] || parts[0].phrase != form {
					t.Errorf("%q: read as %+v, want holiday %q", form, parts, h.sv)
				}
				if !containsAny(form, holidayWords) {
					t.Errorf("%q holds none of holidayWords", form)
				}
			}
		}
	}
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
