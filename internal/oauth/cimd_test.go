package oauth

import (
	"strings"
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

func TestCleanClientNameDropsInvisibleCharacters(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"Hemhjälpen\u202E IA", "Hemhjälpen IA"},             // right-to-left override
		{"\u2066Claude\u2069 \u202Aapp\u202C", "Claude app"}, // isolates and embeddings
		{"Chat\u200BGPT\u200C\u200D\uFEFF", "ChatGPT"},       // zero-width space, (non-)joiners, BOM
		{"Appen\u00AD\u2060\u061C", "Appen"},                 // soft hyphen, word joiner, Arabic letter mark
		{"\u3164\u115F Tom", "Tom"},                          // blank Hangul letters
		{"Café Öst 🧹", "Café Öst 🧹"},
	} {
		if got := cleanClientName(c.in); got != c.want {
			t.Errorf("cleanClientName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestClaimsBokat(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"Bokat":            true,
		"BOKAT":            true,
		"bokat support":    true,
		"MinBokat-app":     true,
		"B o k a t":        true,
		"B.o.k.a.t":        true,
		"B0kat":            true,
		"Bоkаt":            true, // Cyrillic о and а
		"ВОКАТ":            true, // Cyrillic capitals
		"Ｂｏｋａｔ":            true, // full width
		"𝐁𝐨𝐤𝐚𝐭":            true, // mathematical bold
		"Bokát":            true,
		"Boka tid":         false,
		"Hemhjälpen AI":    false,
		"Bokföring Direkt": false,
		"ChatGPT":          false,
	} {
		if got := claimsBokat(name); got != want {
			t.Errorf("claimsBokat(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestClaimedAssistant(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"ChatGPT":         "ChatGPT",
		"Chat GPT":        "ChatGPT",
		"chatgрт":         "ChatGPT", // Cyrillic р and т
		"Claude Code":     "Claude",
		"C1aude":          "Claude",
		"CIaude":          "Claude", // capital i for l
		"Gemini helper":   "Gemini",
		"Hemhjälpen AI":   "",
		"Städbokningen":   "",
		"Mistral of mine": "",
	} {
		if got := claimedAssistant(name); got != want {
			t.Errorf("claimedAssistant(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestASCIIHost(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"app.example.se":  "app.example.se",
		"chаtgpt.com":     "xn--chtgpt-4nf.com", // Cyrillic а
		"bokat.se":        "bokat.se",
		"Städ.Example.SE": "xn--std-rla.example.se",
		"127.0.0.1":       "127.0.0.1",
	} {
		if got := asciiHost(host); got != want {
			t.Errorf("asciiHost(%q) = %q, want %q", host, got, want)
		}
	}
	for _, host := range []string{"a\u202Eb.example", "xn--zz-\u0430.example", "\u200b.example"} {
		if got := asciiHost(host); strings.ContainsFunc(got, func(r rune) bool { return r > 0x7e || r < 0x20 }) {
			t.Errorf("asciiHost(%q) = %q, not printable ASCII", host, got)
		}
	}
}
