package schedule

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzParseTiming reads arbitrary timing texts at arbitrary instants from
// 2000 to 2100 (across DST changes and holidays). Properties: it never panics,
// and the window is well formed: it starts at or after now, ends after it
// starts, lasts at most a year (plus a DST hour), ends before year 10000,
// has a non-empty label, a daily range within one day that the window's
// ends respect, and, when understood, phrases the customer actually wrote.
// A TimingReader gives exactly the window ParseTiming gives, also when it
// answers from its memory.
func FuzzParseTiming(f *testing.F) {
	// Seeds: the phrase corpus at its instants, and the texts of
	// TestParseTiming at its Saturday 10:00.
	for _, cl := range readCorpus(f) {
		f.Add(cl.phrase, "", cl.locale, cl.now.Unix())
	}
	sat := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC).Unix()
	for _, s := range [][3]string{
		{"i dag", "", "sv-SE"},
		{"Kan ni komma idag?", "", "sv-SE"},
		{"today please", "", "en"},
		{"i morgon", "", "sv"},
		{"IMORGON", "", "sv"},
		{"Tomorrow", "", "en-GB"},
		{"i övermorgon", "", "sv"},
		{"the day after tomorrow", "", "en"},
		{"i overmorgon", "", "sv"},
		{"nästa vecka", "", "sv"},
		{"NASTA VECKA", "", "sv"},
		{"sometime next week", "", "en"},
		{"denna vecka", "", "sv"},
		{"helst den här veckan", "", "sv"},
		{"this week", "", "en"},
		{"vecka 50", "", "sv"},
		{"v. 50", "", "sv"},
		{"v50", "", "sv"},
		{"week 50", "", "en"},
		{"vecka 47", "", "sv"},
		{"vecka 2", "", "sv"},
		{"week 46", "", "en"},
		{"vecka 53", "", "sv"},
		{"i helgen", "", "sv"},
		{"at the weekend", "", "en"},
		{"helgen", "", "sv"},
		{"tisdag", "", "sv"},
		{"on Tuesday", "", "en"},
		{"på tisdag förmiddag", "", "sv"},
		{"Tisdagsförmiddag", "", "sv"},
		{"torsdag morgon", "", "sv"},
		{"Tuesday morning", "", "en"},
		{"onsdag eftermiddag", "", "sv"},
		{"wednesday afternoon", "", "en"},
		{"fredag kväll", "", "sv"},
		{"Friday evening", "", "en"},
		{"lördag förmiddag", "", "sv"},
		{"Saturday morning", "", "en"},
		{"lördag", "", "sv"},
		{"Helst tisdag nästa vecka, efter kl. 15.30 om det går", "", "sv"},
		{"thursday week 50", "", "en"},
		{"ikväll", "", "sv"},
		{"tomorrow afternoon", "", "en"},
		{"förmiddagar passar bäst", "", "sv"},
		{"efter 15", "", "sv"},
		{"efter kl 15", "", "sv"},
		{"after 3 pm", "", "en"},
		{"any day after 15:00", "", "en"},
		{"after 3", "", "en"},
		{"i morgon efter 15", "", "sv"},
		{"före 12", "", "sv"},
		{"before noon", "", "en"},
		{"före kl. 12", "", "sv"},
		{"mellan 10 och 14", "", "sv"},
		{"från kl. 9 till 13", "", "sv"},
		{"from 9 to 5", "", "en"},
		{"kl 10-14", "", "sv"},
		{"between 8 and 5", "", "en"},
		{"så snart som möjligt", "", "sv"},
		{"Snarast!", "", "sv"},
		{"", "akut", "sv"},
		{"", "ASAP", "en"},
		{"as soon as possible", "", "en"},
		{"", "inom en vecka", "sv"},
		{"", "within a week", "en"},
		{"", "inom två veckor", "sv"},
		{"", "within the next 10 days", "en"},
		{"", "flexibel", "sv"},
		{"", "I'm flexible", "en"},
		{"2026-12-03", "", "sv"},
		{"on 2026-12-03 please", "", "en"},
		{"den 3 december", "", "sv"},
		{"3:e dec", "", "sv"},
		{"December 3", "", "en"},
		{"the 3rd of December", "", "en"},
		{"3/12", "", "sv"},
		{"1 november", "", "sv"},
		{"3 januari 2027 förmiddag", "", "sv"},
		{"i morgon", "asap", "sv"},
		{"när det passar er", "snarast", "sv"},
		{"förmiddag", "inom en vecka", "sv"},
		{"asap, ideally Tuesday", "", "en"},
		{"i morgon eller tisdag", "", "sv"},
		{"söndag förmiddag", "", "sv"},
		{"tomorrow", "", "en"},
		{"asap", "", "en"},
		{"när det passar", "", "sv-SE"},
		{"whenever suits you best", "soonish", "en"},
		{"when it suits you", "not sure", "en"},
		{"", "", "sv"},
		{" ", "", "en-US"},
		{"2026-11-01", "", "sv"},
		{"this morning", "", "en"},
		{"denna vecka förmiddag", "", "sv"},
		{"31/2", "", "sv"},
		{"24/7", "", "sv"},
		{"alla helgons dag", "", "sv"},
		{"tisdagarnas idagsläge morgonrock", "", "sv"},
	} {
		f.Add(s[0], s[1], s[2], sat)
	}
	// Around the DST changes of 2027 and at midnight.
	f.Add("i natt mellan 2 och 3", "", "sv", time.Date(2027, 3, 27, 23, 30, 0, 0, time.UTC).Unix())
	f.Add("söndag efter kl 2", "", "sv", time.Date(2027, 10, 30, 12, 0, 0, 0, time.UTC).Unix())
	f.Add("3 december 9999", "within 11 months", "en", int64(0))
	// Clock times on the nights the clocks change, exclusions, unused words.
	f.Add("i morgon kl 2:30", "", "sv", time.Date(2027, 3, 27, 9, 0, 0, 0, time.UTC).Unix())
	f.Add("söndag kl 2.30", "utom lördag", "sv", time.Date(2027, 10, 29, 9, 0, 0, 0, time.UTC).Unix())
	f.Add("kl 23:30", "not on Sunday", "en", time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC).Unix())
	f.Add("inte måndag, tisdag, onsdag, torsdag, fredag, lördag eller söndag", "", "sv", sat)
	f.Add("i morgon men inte i helgen, efter jobbet kl 9 typ 3-4 dagar", "we're away until the 5th", "en", sat)

	reader := NewTimingReader(64)
	f.Fuzz(func(t *testing.T, preferred, urgency, locale string, unix int64) {
		const from, span = 946684800, 3155760000 // 2000 to 2100
		now := time.Unix(from+((unix%span)+span)%span, 0)
		w := ParseTiming(preferred, urgency, locale, now)
		for i := range 2 {
			if got := reader.Parse(preferred, urgency, locale, now); !got.Equal(w) {
				t.Fatalf("TimingReader.Parse (call %d) =\n%+v\nParseTiming =\n%+v", i+1, got, w)
			}
		}
		checkWindow(t, w, preferred, urgency, now)
	})
}

func checkWindow(t *testing.T, w Window, preferred, urgency string, now time.Time) {
	t.Helper()
	const maxLength = (maxWithinDays*24 + 1) * time.Hour
	switch {
	case w.Start.Location() != time.UTC || w.End.Location() != time.UTC:
		t.Fatalf("window %s – %s is not in UTC", w.Start, w.End)
	case w.Start.Before(now):
		t.Fatalf("window starts at %s, before now %s", w.Start, now)
	case !w.End.After(w.Start):
		t.Fatalf("window %s – %s does not end after it starts", w.Start, w.End)
	case w.End.Sub(w.Start) > maxLength:
		t.Fatalf("window %s – %s lasts %s, more than %s", w.Start, w.End, w.End.Sub(w.Start), maxLength)
	case w.End.Year() > 10000:
		t.Fatalf("window ends in %d", w.End.Year())
	case strings.TrimSpace(w.Label) == "" || !utf8.ValidString(w.Label):
		t.Fatalf("label %q is empty or not UTF-8", w.Label)
	}
	if !w.Understood {
		if !w.Start.Equal(now) || !w.End.Equal(now.In(Stockholm()).AddDate(0, 0, DefaultWindowDays)) {
			t.Fatalf("default window %s – %s, want [now, now + %d days) from %s", w.Start, w.End, DefaultWindowDays, now)
		}
	} else {
		if w.Phrase == "" {
			t.Fatalf("understood window %+v names no phrase", w)
		}
		for _, p := range strings.Split(w.Phrase, " + ") {
			if p == "" || (!strings.Contains(preferred, p) && !strings.Contains(urgency, p)) {
				t.Fatalf("phrase %q (of %q) is not in the texts %q, %q", p, w.Phrase, preferred, urgency)
			}
		}
	}
	for _, u := range w.Unused {
		if u == "" || (!strings.Contains(preferred, u) && !strings.Contains(urgency, u)) {
			t.Fatalf("unused %q (of %q) is not in the texts %q, %q", u, w.Unused, preferred, urgency)
		}
	}
	if w.Except != 0 {
		if w.Except == WeekdaysOf(time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday) {
			t.Fatalf("window %+v leaves out every day", w)
		}
		if d := DateOf(w.Start); w.Except.Has(d.Weekday()) {
			t.Fatalf("window starts on %s, a day left out (%b)", d, w.Except)
		}
		if d := DateOf(w.End.Add(-time.Nanosecond)); w.Except.Has(d.Weekday()) {
			t.Fatalf("window ends on %s, a day left out (%b)", d, w.Except)
		}
	}
	if !w.Starts.IsZero() {
		if err := w.Starts.Validate(); err != nil || w.Starts.Start != w.Daily.Start || w.Starts.End > w.Daily.End {
			t.Fatalf("start range %s does not open the daily range %s", w.Starts, w.Daily)
		}
	}
	if w.Daily == (ClockRange{}) {
		return
	}
	if err := w.Daily.Validate(); err != nil {
		t.Fatalf("daily range %s: %v", w.Daily, err)
	}
	// The window starts and ends inside the daily range, compared as
	// instants: on the night clocks go forward a range such as 02:00–03:00
	// is empty and both its ends are the same instant. The end may be the
	// midnight after a range that ends at midnight.
	inRange := func(at time.Time, d Date) bool {
		return !at.Before(d.At(w.Daily.Start)) && !at.After(d.At(w.Daily.End))
	}
	if !inRange(w.Start, DateOf(w.Start)) {
		t.Fatalf("window starts at %s, outside its daily range %s", w.Start.In(Stockholm()), w.Daily)
	}
	if d := DateOf(w.End); !inRange(w.End, d) && !inRange(w.End, d.AddDays(-1)) {
		t.Fatalf("window ends at %s, outside its daily range %s", w.End.In(Stockholm()), w.Daily)
	}
}
