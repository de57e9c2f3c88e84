package schedule

import (
	"testing"
	"time"
)

func TestTimingReaderReadsAsParseTimingDoes(t *testing.T) {
	t.Parallel()
	texts := [][2]string{
		{"i morgon efter 15", ""}, {"tisdag förmiddag", ""}, {"", "så snart som möjligt"}, {"förmiddag", "inom en vecka"},
		{"vecka 50", ""}, {"Helst tisdag nästa vecka, efter kl. 15.30", ""}, {"i dag", ""}, {"whenever", ""},
		{"när stjärnorna står rätt", ""}, {"", ""}, {"3 december", "asap"},
	}
	nows := []time.Time{local(2026, 11, 21, 10, 0), local(2026, 11, 21, 16, 0), local(2026, 3, 27, 9, 0), local(2026, 12, 30, 23, 0)}
	tr := NewTimingReader(5) // small: it forgets while the test runs
	for round := 0; round < 2; round++ {
		for _, now := range nows {
			for _, tx := range texts {
				for _, locale := range []string{"sv-SE", "en"} {
					want := ParseTiming(tx[0], tx[1], locale, now)
					if got := tr.Parse(tx[0], tx[1], locale, now); !got.Equal(want) {
						t.Errorf("Parse(%q, %q, %s, %s) =\n%+v\nwant\n%+v", tx[0], tx[1], locale, now, got, want)
					}
				}
			}
		}
	}
	if n := len(tr.parts); n > 5 {
		t.Errorf("the reader remembers %d texts, want at most 5", n)
	}
}

func BenchmarkParseTiming(b *testing.B) {
	now := local(2026, 11, 23, 9, 0)
	b.Run("ParseTiming", func(b *testing.B) {
		for b.Loop() {
			ParseTiming("tisdag förmiddag", "inom två veckor", "sv-SE", now)
		}
	})
	b.Run("TimingReader", func(b *testing.B) {
		tr := NewTimingReader(0)
		for b.Loop() {
			tr.Parse("tisdag förmiddag", "inom två veckor", "sv-SE", now)
		}
	})
}
