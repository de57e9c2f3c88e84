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
				parts := findParts(form).parts
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

// TestSeasonLabels checks the labels and phrases of the calendar phrase
// families in both languages; the corpus checks their windows.
func TestSeasonLabels(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 21, 10, 0)
	tests := []struct{ text, locale, label, phrase string }{
		{"julafton", "sv", "Julafton, torsdag 24 december 2026 (helgdag)", "julafton"},
		{"julafton", "en", "Christmas Eve, Thursday 24 December 2026 (a holiday in Sweden)", "julafton"},
		{"före jul", "sv", "Före jul, lördag 21 november – onsdag 23 december 2026", "före jul"},
		{"före jul", "en", "Before Christmas, Saturday 21 November – Wednesday 23 December 2026", "före jul"},
		{"efter nyår", "sv", "Efter nyår, lördag 2 januari – fredag 15 januari 2027", "efter nyår"},
		{"efter nyår", "en", "After New Year, Saturday 2 January – Friday 15 January 2027", "efter nyår"},
		{"i mitten av december", "sv", "I mitten av december, fredag 11 december – söndag 20 december 2026", "i mitten av december"},
		{"i mitten av december", "en", "Mid-December, Friday 11 December – Sunday 20 December 2026", "i mitten av december"},
		{"om två veckor", "sv", "Om 2 veckor (vecka 49), måndag 30 november – söndag 6 december 2026", "om två veckor"},
		{"om två veckor", "en", "In 2 weeks (week 49), Monday 30 November – Sunday 6 December 2026", "om två veckor"},
		{"Fredag den 4:e", "sv", "Fredag 4 december 2026", "Fredag den 4:e"},
		{"Fredag den 4:e", "en", "Friday 4 December 2026", "Fredag den 4:e"},
		{"kring den 15:e", "sv", "Kring tisdag 15 december 2026, söndag 13 december – torsdag 17 december 2026", "kring den 15:e"},
		{"kring den 15:e", "en", "Around Tuesday 15 December 2026, Sunday 13 December – Thursday 17 December 2026", "kring den 15:e"},
		{"påskveckan", "sv", "Påskveckan, måndag 22 mars – söndag 28 mars 2027 (med helgdagar)", "påskveckan"},
		{"påskveckan", "en", "Holy Week, Monday 22 March – Sunday 28 March 2027 (includes holidays in Sweden)", "påskveckan"},
		{"nästa månad", "sv", "Nästa månad (december), tisdag 1 december – torsdag 31 december 2026", "nästa månad"},
		{"nästa månad", "en", "Next month (December), Tuesday 1 December – Thursday 31 December 2026", "nästa månad"},
		{"i slutet av veckan", "sv", "I slutet av vecka 47, lördag 21 november – söndag 22 november 2026", "i slutet av veckan"},
		{"i slutet av veckan", "en", "Late in week 47, Saturday 21 November – Sunday 22 November 2026", "i slutet av veckan"},
		{"senast fredag", "sv", "Senast fredag 27 november 2026, lördag 21 november – fredag 27 november 2026", "senast fredag"},
		{"senast fredag", "en", "By Friday 27 November 2026, Saturday 21 November – Friday 27 November 2026", "senast fredag"},
		{"onsdag om två veckor", "sv", "Onsdag 2 december 2026", "onsdag + om två veckor"},
		{"onsdag om två veckor", "en", "Wednesday 2 December 2026", "onsdag + om två veckor"},
		{"om 3 dagar", "sv", "Om 3 dagar, tisdag 24 november 2026", "om 3 dagar"},
		{"om 3 dagar", "en", "In 3 days, Tuesday 24 November 2026", "om 3 dagar"},
		{"om en månad", "sv", "Om en månad (december), tisdag 1 december – torsdag 31 december 2026", "om en månad"},
		{"om en månad", "en", "In a month (December), Tuesday 1 December – Thursday 31 December 2026", "om en månad"},
		{"mellandagarna", "sv", "Mellandagarna, söndag 27 december – onsdag 30 december 2026", "mellandagarna"},
		{"mellandagarna", "en", "The days between Christmas and New Year, Sunday 27 December – Wednesday 30 December 2026", "mellandagarna"},
		{"i början av månaden, förmiddag", "sv", "I början av december, tisdag 1 december – torsdag 10 december 2026, förmiddag (08:00–12:00)", "i början av månaden + förmiddag"},
		{"i början av månaden, förmiddag", "en", "Early December, Tuesday 1 December – Thursday 10 December 2026, morning (08:00–12:00)", "i början av månaden + förmiddag"},
	}
	for _, tt := range tests {
		got := ParseTiming(tt.text, "", tt.locale, now)
		if got.Label != tt.label || got.Phrase != tt.phrase || !got.Understood {
			t.Errorf("ParseTiming(%q, %s): label %q, phrase %q, understood %v; want %q, %q", tt.text, tt.locale, got.Label, got.Phrase, got.Understood, tt.label, tt.phrase)
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
