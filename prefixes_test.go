package bokat_test

import (
	"strings"
	"testing"

	"bokat"
)

// TestSecretPrefixesAreNotIDPrefixes keeps every secret recognisable by its
// first characters: no secret prefix equals, starts with or begins any id
// prefix, and no two prefixes of one table are equal.
func TestSecretPrefixesAreNotIDPrefixes(t *testing.T) {
	t.Parallel()
	ids, secrets := bokat.IDPrefixes(), bokat.SecretPrefixes()
	for _, s := range secrets {
		for _, id := range ids {
			if strings.HasPrefix(s, id) || strings.HasPrefix(id, s) {
				t.Errorf("secret prefix %q and id prefix %q start alike", s, id)
			}
		}
	}
	for _, table := range [][]string{ids, secrets} {
		seen := map[string]bool{}
		for _, p := range table {
			if seen[p] {
				t.Errorf("prefix %q appears twice", p)
			}
			seen[p] = true
		}
	}
	if bokat.RefreshTokenPrefix == bokat.LegacyRefreshTokenPrefix {
		t.Error("the refresh token prefix is still the legacy one")
	}
}

// TestPartnerTestTokenPrefixIsAPartnerPrefix keeps test tokens partner
// tokens (the authenticator routes them by PartnerTokenPrefix) that a person
// tells from live ones by their first characters.
func TestPartnerTestTokenPrefixIsAPartnerPrefix(t *testing.T) {
	t.Parallel()
	if !strings.HasPrefix(bokat.PartnerTestTokenPrefix, bokat.PartnerTokenPrefix) {
		t.Errorf("test prefix %q does not start with the partner prefix %q", bokat.PartnerTestTokenPrefix, bokat.PartnerTokenPrefix)
	}
	if bokat.PartnerTestTokenPrefix == bokat.PartnerTokenPrefix {
		t.Error("test and live partner tokens share their prefix")
	}
}
