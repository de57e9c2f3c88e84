package httpapi

import (
	"errors"
	"slices"
	"testing"

	"bokat"
)

// TestCheckBodyTextNamesEachField pins the field paths of the body walk:
// members after nested values, arrays of arrays, objects in arrays, and
// which top-level members are free text.
func TestCheckBodyTextNamesEachField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want []string // fields named, in body order
	}{
		{`{"a": "ok", "b": "x\u0000"}`, []string{"b"}},
		{`{"a": {"b": [1, "ok", {"c": "\u0001"}]}, "d": "\u007f"}`, []string{"a.b[2].c", "d"}},
		{`{"a": [[1, 2], ["ok", "\u0085"]], "b": [{"c": 1}, {"c": "\r"}]}`, []string{"a[1][1]", "b[1].c"}},
		{`{"description": "rad\r\nrad\tx", "notes": "a\nb", "details": {"x": [{"y": "a\nb"}]}}`, nil},
		{`{"description": "a\rb", "name": "a\nb", "details": {"x": ["\u0000"]}}`, []string{"description", "name", "details.x[0]"}},
		{`{"customer": {"name": "a\tb"}}`, []string{"customer.name"}},
		{"{\"a\": \"\xff\", \"b\xfe\": 1}", []string{"a", "(member name)"}},
		{`"\u0000"`, []string{"(root)"}},
		{`["ok", "\u0000"]`, []string{"[1]"}},
	}
	for _, tc := range tests {
		err := checkBodyText([]byte(tc.body))
		var got []string
		var e *bokat.Error
		if errors.As(err, &e) {
			if e.Code != bokat.CodeValidationFailed {
				t.Errorf("%s: code %s", tc.body, e.Code)
			}
			for _, i := range e.Issues {
				f, _, _ := cutIssue(i)
				got = append(got, f)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: fields %q, want %q", tc.body, got, tc.want)
		}
	}
}

func cutIssue(issue string) (field, msg string, ok bool) {
	for i := 0; i+1 < len(issue); i++ {
		if issue[i] == ':' && issue[i+1] == ' ' {
			return issue[:i], issue[i+2:], true
		}
	}
	return issue, "", false
}
