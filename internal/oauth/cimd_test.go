package oauth

import (
	"testing"
	"time"
)

func TestCacheTTLStaysWithinBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		header string
		want   time.Duration
	}{
		{"", ClientDocumentDefaultTTL},
		{"public, max-age=600", 10 * time.Minute},
		{"max-age=5", ClientDocumentMinTTL},
		{"max-age=99999999999", ClientDocumentMaxTTL},
		{"Max-Age=\"120\"", 2 * time.Minute},
		{"no-store", ClientDocumentMinTTL},
		{"max-age=600, no-cache", ClientDocumentMinTTL},
		{"max-age=-1", ClientDocumentDefaultTTL},
		{"max-age=soon", ClientDocumentDefaultTTL},
	} {
		if got := cacheTTL(c.header); got != c.want {
			t.Errorf("cacheTTL(%q) = %v, want %v", c.header, got, c.want)
		}
	}
}

func TestCleanClientName(t *testing.T) {
	t.Parallel()
	long := ""
	for range 130 {
		long += "å"
	}
	for _, c := range []struct{ in, want string }{
		{"Claude", "Claude"},
		{"  Claude\tCode \r\n", "Claude Code"},
		{"Cursor\x00\x1b[31m", "Cursor[31m"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{long, long[:240]},
		{"", ""},
	} {
		if got := cleanClientName(c.in); got != c.want {
			t.Errorf("cleanClientName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
