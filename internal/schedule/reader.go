package schedule

import (
	"sync"
	"time"
)

// TimingReader is ParseTiming with a bounded memory of the texts it has
// read. Finding the phrases of a text runs some forty regular expressions,
// while assistants send the same few texts ("nästa vecka", "så snart som
// möjligt") again and again; what a text says does not depend on the time,
// so a remembered reading gives exactly the window ParseTiming gives. It is
// safe for concurrent use.
type TimingReader struct {
	mu    sync.Mutex
	parts map[string]found
	max   int
}

// Limits of a TimingReader's memory.
const (
	// DefaultTimingMemory is the number of texts NewTimingReader(0) remembers.
	DefaultTimingMemory = 4096
	// maxRememberedText is the longest text remembered, in bytes; longer
	// texts are read every time.
	maxRememberedText = 160
)

// NewTimingReader returns a reader remembering up to maxTexts texts
// (DefaultTimingMemory when maxTexts <= 0). When it is full it forgets
// everything and starts again, which bounds its memory without bookkeeping.
func NewTimingReader(maxTexts int) *TimingReader {
	if maxTexts <= 0 {
		maxTexts = DefaultTimingMemory
	}
	return &TimingReader{parts: make(map[string]found), max: maxTexts}
}

// Parse is ParseTiming.
func (tr *TimingReader) Parse(preferredText, urgency, locale string, now time.Time) Window {
	return parseTiming(preferredText, urgency, locale, now, tr.find)
}

// find returns what text says; the returned slices are shared and must
// not be modified (read copies the parts).
func (tr *TimingReader) find(text string) found {
	if text == "" || len(text) > maxRememberedText {
		return findParts(text)
	}
	tr.mu.Lock()
	parts, ok := tr.parts[text]
	tr.mu.Unlock()
	if ok {
		return parts
	}
	parts = findParts(text)
	tr.mu.Lock()
	if len(tr.parts) >= tr.max {
		clear(tr.parts)
	}
	tr.parts[text] = parts
	tr.mu.Unlock()
	return parts
}
