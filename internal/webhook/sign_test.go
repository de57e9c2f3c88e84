package webhook

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
)

func TestSignMatchesTheDocumentedVectors(t *testing.T) {
	t.Parallel()
	body := `{"id":"0196a6f0-3333-7000-8000-000000000001","type":"booking.cancelled","data":{"booking":{"id":"bk_01HZX","status":"cancelled","provider_name":"Rörmokare Stockholm AB"}}}`
	for _, tc := range []struct{ name, secret, want string }{
		{name: "standard", secret: "whsec_MfKQ9r8GKYqrTwJSJ6QchjgNGPTFgzwe3GwxYmaHoXM=",
			want: "v1,CgYrh6okZJHiBb2F4buyQcPQAPSusayT1wL1ZBMeK2Y v1,CgYrh6okZJHiBb2F4buyQcPQAPSusayT1wL1ZBMeK2Y="},
		{name: "legacy", secret: "whsec_MfKQ9r8GKYqrTwJSJ6QchjgNGPTFgzwe3GwxYmaHoXM",
			want: "v1,tGK5WhXbRr0my5_w7hYClDYWBmKZZBOThncQESy2NSg v1,tGK5WhXbRr0my5/w7hYClDYWBmKZZBOThncQESy2NSg="},
	} {
		if got := Sign(tc.secret, "0196a6f0-3333-7000-8000-000000000001", 1777881600, []byte(body)); got != tc.want {
			t.Errorf("%s: Sign = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestSigningKey(t *testing.T) {
	t.Parallel()
	std := "whsec_" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	cases := []struct{ name, secret, want string }{
		{name: "standard form: the decoded bytes", secret: std, want: strings.Repeat("k", 32)},
		{name: "legacy base64url: the string", secret: "whsec_MfKQ9r8GKYqrTwJSJ6QchjgNGPTFgzwe3GwxYmaHoXM", want: "whsec_MfKQ9r8GKYqrTwJSJ6QchjgNGPTFgzwe3GwxYmaHoXM"},
		{name: "not canonical base64: the string", secret: "whsec_MfKQ9r8GKYqrTwJSJ6QchjgNGPTFgzwe3GwxYmaHoXN=", want: "whsec_MfKQ9r8GKYqrTwJSJ6QchjgNGPTFgzwe3GwxYmaHoXN="},
		{name: "other length: the string", secret: "whsec_" + base64.StdEncoding.EncodeToString([]byte("short")), want: "whsec_c2hvcnQ="},
	}
	for _, tc := range cases {
		if got := string(SigningKey(tc.secret)); got != tc.want {
			t.Errorf("%s: SigningKey = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNewSigningSecretIs256BitsOfStandardBase64(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`)
	seen := map[string]bool{}
	for range 100 {
		s := NewSigningSecret()
		if !re.MatchString(s) || seen[s] || len(SigningKey(s)) != 32 {
			t.Fatalf("secret %q is malformed or repeated", s)
		}
		seen[s] = true
	}
}
