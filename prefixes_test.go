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
