package auth

import (
	"net/http/httptest"
	"strings"
	"testing"

	"bokat"
)

func TestNewSecretHas256BitsOfBase64URL(t *testing.T) {
	t.Parallel()
	a, b := NewSecret(PartnerTokenPrefix), NewSecret(PartnerTokenPrefix)
	if a == b {
		t.Fatal("two secrets are equal")
	}
	if !strings.HasPrefix(a, "bkp_") || len(a) != 4+43 {
		t.Fatalf("secret %q: want bkp_ + 43 chars", a)
	}
}

func TestHasherIsKeyedAndDomainSeparated(t *testing.T) {
	t.Parallel()
	if _, err := NewHasher(make([]byte, 31)); err == nil {
		t.Fatal("a 31-byte pepper was accepted")
	}
	h1, _ := NewHasher([]byte(strings.Repeat("a", 32)))
	h2, _ := NewHasher([]byte(strings.Repeat("b", 32)))
	if h1.Hash("partner", "t") == h2.Hash("partner", "t") {
		t.Error("different peppers give the same hash")
	}
	if h1.Hash("partner", "t") == h1.Hash("access", "t") {
		t.Error("different domains give the same hash")
	}
	if h1.Hash("partner", "t") != h1.Hash("partner", "t") {
		t.Error("hash is not deterministic")
	}
}

func TestCredentialForms(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		authz     string
		header    string
		wantToken string
		wantForm  bokat.CredentialForm
		wantErr   bool
	}{
		{"none", "", "", "", bokat.FormNone, false},
		{"bearer", "Bearer bkp_x", "", "bkp_x", bokat.FormBearer, false},
		{"bearer lower case scheme", "bearer bkp_x", "", "bkp_x", bokat.FormBearer, false},
		{"partner header", "", "bkp_y", "bkp_y", bokat.FormPartnerHeader, false},
		{"both equal", "Bearer bkp_y", "bkp_y", "bkp_y", bokat.FormPartnerHeader, false},
		{"both different", "Bearer bkp_x", "bkp_y", "", bokat.FormNone, true},
		{"basic scheme", "Basic eDp5", "", "", bokat.FormNone, true},
		{"bearer without token", "Bearer ", "", "", bokat.FormNone, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tc.authz != "" {
				r.Header.Set("Authorization", tc.authz)
			}
			if tc.header != "" {
				r.Header.Set("X-Service-Requests-Token", tc.header)
			}
			token, form, err := Credential(r)
			if (err != nil) != tc.wantErr || token != tc.wantToken || form != tc.wantForm {
				t.Fatalf("got %q %q %v, want %q %q err=%v", token, form, err, tc.wantToken, tc.wantForm, tc.wantErr)
			}
		})
	}
}
