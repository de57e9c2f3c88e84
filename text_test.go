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
