package schedule

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// corpusLine is one line of testdata/phrases.tsv.
type corpusLine struct {
	line       int
	phrase     string
	locale     string
	now        time.Time
	outcome    string // "window", "unparsed" or "passed"
	start, end time.Time
	daily      ClockRange
	label      string
	unused     []string // the words the reading must report unused, in order
}

// readCorpus reads testdata/phrases.tsv; see its header for the format.
func readCorpus(tb testing.TB) []corpusLine {
	tb.Helper()
	f, err := os.Open("testdata/phrases.tsv")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		var cols []string
		var unused []string
		for _, c := range strings.Split(text, "\t") {
			if rest, ok := strings.CutPrefix(c, "unused: "); ok {
				unused = strings.Split(rest, " | ")
				continue
			}
			cols = append(cols, c)
		}
		if len(cols) < 4 {
			tb.Fatalf("phrases.tsv:%d: want at least 4 tab-separated columns, got %d", n, len(cols))
		}
		cl := corpusLine{line: n, phrase: cols[0], locale: cols[1], now: corpusTime(tb, n, cols[2]), outcome: cols[3], unused: unused}
		if cl.outcome != "unparsed" && cl.outcome != "passed" {
			if len(cols) < 5 {
				tb.Fatalf("phrases.tsv:%d: a window needs a start and an end", n)
			}
			cl.outcome = "window"
			cl.start, cl.end = corpusTime(tb, n, cols[3]), corpusTime(tb, n, cols[4])
			if len(cols) > 5 && cols[5] != "" {
				cl.daily = corpusClock(tb, n, cols[5])
			}
			if len(cols) > 6 {
				cl.label = cols[6]
			}
		}
		out = append(out, cl)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func corpusTime(tb testing.TB, line int, s string) time.Time {
	tb.Helper()
	t, err := time.ParseInLocation("2006-01-02 15:04", s, Stockholm())
	if err != nil {
		tb.Fatalf("phrases.tsv:%d: %v", line, err)
	}
	return t
}

// corpusClock reads "08:00-12:00"; "24:00" is the end of the day.
func corpusClock(tb testing.TB, line int, s string) ClockRange {
	tb.Helper()
	minutes := func(hm string) int {
		h, m, ok := strings.Cut(hm, ":")
		hh, err1 := strconv.Atoi(h)
		mm, err2 := strconv.Atoi(m)
		if !ok || err1 != nil || err2 != nil {
			tb.Fatalf("phrases.tsv:%d: bad clock %q", line, hm)
		}
		return hh*60 + mm
	}
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		tb.Fatalf("phrases.tsv:%d: bad daily range %q", line, s)
	}
	return ClockRange{Start: minutes(from), End: minutes(to)}
}

// TestPhraseCorpus reads every phrase of testdata/phrases.tsv and checks its
// window, and logs the share the parser does not understand.
func TestPhraseCorpus(t *testing.T) {
	t.Parallel()
	lines := readCorpus(t)
	if len(lines) < 150 {
		t.Errorf("the corpus has %d phrases, want at least 150", len(lines))
	}
	unparsed, withUnused := 0, 0
	for _, cl := range lines {
		got := ParseTiming(cl.phrase, "", cl.locale, cl.now)
		where := "phrases.tsv:" + strconv.Itoa(cl.line) + " " + strconv.Quote(cl.phrase)
		if !slices.Equal(got.Unused, cl.unused) {
			t.Errorf("%s: unused %q, want %q", where, got.Unused, cl.unused)
		}
		if len(got.Unused) > 0 {
			withUnused++
		}
		if cl.outcome == "unparsed" && len(got.Unused) == 0 {
			t.Errorf("%s: not understood, but no word is reported unused: the assistant has nothing to ask about", where)
		}
		switch cl.outcome {
		case "unparsed", "passed":
			if cl.outcome == "unparsed" {
				unparsed++
			}
			def := cl.now.AddDate(0, 0, DefaultWindowDays)
			if got.Understood || !got.Start.Equal(cl.now) || !got.End.Equal(def) {
				t.Errorf("%s: got %v [%s, %s) %q, want the default window (%s)", where, got.Understood, fmtLocal(got.Start), fmtLocal(got.End), got.Label, cl.outcome)
			}
			if passed := got.Phrase != ""; passed != (cl.outcome == "passed") {
				t.Errorf("%s: phrase %q: want %s", where, got.Phrase, cl.outcome)
			}
		default:
			if !got.Understood || !got.Start.Equal(cl.start) || !got.End.Equal(cl.end) {
				t.Errorf("%s: got %v [%s, %s) %q, want [%s, %s)", where, got.Understood, fmtLocal(got.Start), fmtLocal(got.End), got.Label, fmtLocal(cl.start), fmtLocal(cl.end))
			}
			if got.Daily != cl.daily {
				t.Errorf("%s: Daily = %v, want %v", where, got.Daily, cl.daily)
			}
			if !strings.Contains(got.Label, cl.label) {
				t.Errorf("%s: label %q does not contain %q", where, got.Label, cl.label)
			}
		}
	}
	figure := corpusFigure(len(lines), unparsed, withUnused)
	t.Log(figure)
	doc, err := os.ReadFile("PHRASES.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), figure) {
		t.Errorf("PHRASES.md does not state the corpus figure; write it as\n%s", figure)
	}
}

// corpusFigure is the sentence of PHRASES.md that reports how much of the
// corpus is not understood, which TestPhraseCorpus keeps true.
func corpusFigure(total, unparsed, withUnused int) string {
	return fmt.Sprintf("Of the %d corpus phrases, %d (%.1f %%) are unparsed and %d (%.1f %%) have words reported unused.",
		total, unparsed, 100*float64(unparsed)/float64(total), withUnused, 100*float64(withUnused)/float64(total))
}

// TestPhraseCorpusInvariants reads every corpus phrase at many instants over
// two years (across DST changes, month and year ends, Easter and midsummer)
// and checks what every window promises: it starts at or after now, ends
// after it starts, is in UTC, has a label, and reads the same through a
// TimingReader.
func TestPhraseCorpusInvariants(t *testing.T) {
	t.Parallel()
	lines := readCorpus(t)
	tr := NewTimingReader(0)
	start := local(2026, 1, 1, 0, 0)
	for i, now := 0, start; now.Before(start.AddDate(2, 0, 0)); i, now = i+1, now.Add(67*time.Hour) {
		for _, cl := range lines {
			for _, locale := range []string{"sv-SE", "en"} {
				got := tr.Parse(cl.phrase, "", locale, now)
				if got.Start.Before(now) || !got.End.After(got.Start) || got.Label == "" ||
					got.Start.Location() != time.UTC || got.End.Location() != time.UTC {
					t.Fatalf("%q at %s (%s): window [%v, %v) label %q", cl.phrase, fmtLocal(now), locale, got.Start, got.End, got.Label)
				}
				if got.Understood && got.End.Sub(got.Start) > 400*24*time.Hour {
					t.Errorf("%q at %s: window of %v", cl.phrase, fmtLocal(now), got.End.Sub(got.Start))
				}
				// What a text says does not depend on the time, so a few
				// instants suffice to compare the reader with ParseTiming.
				if i < 3 {
					if want := ParseTiming(cl.phrase, "", locale, now); !got.Equal(want) {
						t.Fatalf("%q at %s: TimingReader gives %+v, ParseTiming %+v", cl.phrase, fmtLocal(now), got, want)
					}
				}
			}
		}
	}
}
