package idem_test

import (
	"testing"

	"bokat/internal/idem"
)

type body struct {
	A              string `json:"a"`
	N              int    `json:"n,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// The digest is stored with every key: it must not change, or retries of
// earlier writes would be refused as reused keys.
func TestFingerprintIsTheStoredDigest(t *testing.T) {
	for _, tc := range []struct {
		resource string
		want     string
	}{
		{"", "f0d5846d865ed58bebaead74883b75f7eeef4ac43cc4be01649a50d0466192df"},
		{"bkg_1", "1abba23528b530c69c16a9c7edd384a1a5d8e547e85bdff579a11a6d3054cf88"},
	} {
		got, err := idem.Fingerprint(body{A: "x", N: 2}, tc.resource)
		if err != nil || got != tc.want {
			t.Errorf("Fingerprint(…, %q) = %s, %v; want %s", tc.resource, got, err, tc.want)
		}
	}
}

func TestFingerprintTellsResourcesAndRequestsApart(t *testing.T) {
	fp := func(b body, resource string) string {
		t.Helper()
		s, err := idem.Fingerprint(b, resource)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := fp(body{A: "x"}, "bkg_1")
	if fp(body{A: "x"}, "bkg_2") == base {
		t.Error("one request on two resources has one fingerprint")
	}
	if fp(body{A: "y"}, "bkg_1") == base {
		t.Error("two requests on one resource have one fingerprint")
	}
	if fp(body{A: "x"}, "bkg_1") != base {
		t.Error("the same request has two fingerprints")
	}
	if _, err := idem.Fingerprint(func() {}, ""); err == nil {
		t.Error("a value JSON cannot hold was fingerprinted")
	}
}
