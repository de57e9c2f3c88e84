package bokat

import "testing"

func TestCheckText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		multiline bool
		ok        bool
	}{
		{"plain", "Åsa Öberg, Storgatan 1", false, true},
		{"emoji", "Bra 👍", false, true},
		{"empty", "", false, true},
		{"nul", "a\x00b", false, false},
		{"nul multiline", "a\x00b", true, false},
		{"invalid utf8", "a\xffb", true, false},
		{"truncated utf8", "a\xc3", true, false},
		{"encoded replacement char is fine", "a\uFFFDb", false, true},
		{"newline single-line", "a\nb", false, false},
		{"newline multiline", "a\nb", true, true},
		{"tab multiline", "a\tb", true, true},
		{"tab single-line", "a\tb", false, false},
		{"crlf multiline", "a\r\nb", true, true},
		{"bare cr multiline", "a\rb", true, false},
		{"cr at end", "a\r", true, false},
		{"escape", "a\x1bb", true, false},
		{"del", "a\x7fb", true, false},
		{"c1 control", "a\u0085b", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := CheckText(tc.in, tc.multiline)
			if (got == "") != tc.ok {
				t.Errorf("CheckText(%q, %v) = %q, want ok=%v", tc.in, tc.multiline, got, tc.ok)
			}
		})
	}
}

func TestCleanText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string
		multiline bool
		want      string
	}{
		{"Åsa Öberg, Storgatan 1", false, "Åsa Öberg, Storgatan 1"},
		{"rad ett\r\nrad två", true, "rad ett\nrad två"},
		{"rad ett\r\nrad två", false, "rad ett rad två"},
		{"a\rb\nc", true, "a\nb\nc"},
		{"a\rb\nc", false, "a b c"},
		{"a\tb", true, "a\tb"},
		{"a\tb", false, "a b"},
		{"a\x00b\x1b\x7f\u0085c", true, "abc"},
		{"a\xffb", false, "a\uFFFDb"},
	}
	for _, tc := range tests {
		got := CleanText(tc.in, tc.multiline)
		if got != tc.want {
			t.Errorf("CleanText(%q, %v) = %q, want %q", tc.in, tc.multiline, got, tc.want)
		}
		if CheckText(got, tc.multiline) != "" {
			t.Errorf("CleanText(%q, %v) = %q does not pass CheckText", tc.in, tc.multiline, got)
		}
	}
}
