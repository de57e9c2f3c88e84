package schedule

import (
	"testing"
	"time"
)

// FuzzParseTiming checks that no text breaks ParseTiming's promises: it
// never panics, and the window starts at or after now and ends after it
// starts. The seeds are the corpus phrases.
func FuzzParseTiming(f *testing.F) {
	for _, cl := range readCorpus(f) {
		f.Add(cl.phrase, int64(cl.now.Unix()))
	}
	f.Fuzz(func(t *testing.T, text string, unix int64) {
		// Instants from 2000 to 2100.
		now := time.Unix(946684800+((unix%3155760000)+3155760000)%3155760000, 0)
		for _, locale := range []string{"sv", "en"} {
			w := ParseTiming(text, "", locale, now)
			if w.Start.Before(now) || !w.End.After(w.Start) || w.Label == "" {
				t.Fatalf("ParseTiming(%q, %s, %v) = [%v, %v) %q", text, locale, now, w.Start, w.End, w.Label)
			}
		}
	})
}
