package httpapi

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// The fast path of checkBodyText never lets through what the walk refuses:
// for bodies built from a mix of plain, Swedish, escaped and control
// characters, whenever isPlainText says a body is clean, the walk agrees.
func TestPlainTextFastPathAgreesWithTheWalk(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "Å", "ö", " ", "é", "👍", `\"`, `\\`, `\/`, `\n`, `\t`, `\r`, `\r\n`, `\u0000`,
		`\u001b`, `\u007f`, `\u0085`, `\u00e5`, "\u007f", "\u0085", "\u009f", "\u00a0", `\b`, `\f`}
	rng := rand.New(rand.NewPCG(1, 2))
	plain, refused := 0, 0
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		field := []string{"description", "customer_name", "details"}[rng.IntN(3)]
		body := []byte(`{"` + field + `": "` + b.String() + `"}`)
		if field == "details" {
			body = []byte(`{"details": {"x": ["` + b.String() + `"]}}`)
		}
		if !json.Valid(body) {
			continue
		}
		walk := walkBodyText(body)
		if walk != nil {
			refused++
		}
		if isPlainText(body) {
			plain++
			if walk != nil {
				t.Fatalf("isPlainText(%s) = true, but the walk refuses it: %v", body, walk)
			}
		}
	}
	if plain == 0 || refused == 0 {
		t.Fatalf("the generator made %d plain and %d refused bodies; it must make both", plain, refused)
	}
}
