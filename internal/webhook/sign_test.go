package webhook

import (
	"regexp"
	"testing"
)

func TestSignMatchesTheDocumentedVector(t *testing.T) {
	t.Parallel()
	body := `{"id":"0196a6f0-3333-7000-8000-000000000001","type":"booking.cancelled","data":{"booking":{"id":"bk_01HZX","status":"cancelled","provider_name":"Rörmokare Stockholm AB"}}}`
	got := Sign("whsec_MfKQ9r8GKYqrTwJSJ6QchjgNGPTFgzwe3GwxYmaHoXM", "0196a6f0-3333-7000-8000-000000000001", 1777881600, []byte(body))
	if want := "v1,tGK5WhXbRr0my5_w7hYClDYWBmKZZBOThncQESy2NSg"; got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestNewSigningSecretIs256BitsOfBase64URL(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^whsec_[A-Za-z0-9_-]{43}$`)
	seen := map[string]bool{}
	for range 100 {
		s := NewSigningSecret()
		if !re.MatchString(s) || seen[s] {
			t.Fatalf("secret %q is malformed or repeated", s)
		}
		seen[s] = true
	}
}
