package bokat_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
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

// TestTestSecretPrefixesAreTheirKinds keeps every test secret a secret of
// its kind (the authenticator and the token endpoint route them by the live
// prefix) that a person tells from a live one by its first characters: the
// live prefix followed by "test_", for every kind a test credential holds.
func TestTestSecretPrefixesAreTheirKinds(t *testing.T) {
	t.Parallel()
	pairs := bokat.TestSecretPrefixes()
	for _, want := range []string{bokat.PartnerTokenPrefix, bokat.AccessTokenPrefix, bokat.RefreshTokenPrefix, bokat.ClientSecretPrefix} {
		if _, ok := pairs[want]; !ok {
			t.Errorf("no test form for %q", want)
		}
	}
	secrets := bokat.SecretPrefixes()
	for live, test := range pairs {
		if test != live+"test_" {
			t.Errorf("test prefix %q is not %q followed by test_", test, live)
		}
		for _, p := range []string{live, test} {
			if !slices.Contains(secrets, p) {
				t.Errorf("%q is not in the secret prefix table", p)
			}
		}
	}
}

// TestEveryDeclaredPrefixIsInItsTable keeps the tables the test above
// checks complete: every prefix constant of prefixes.go is in IDPrefixes
// (a name ending in IDPrefix) or SecretPrefixes (every other, but the
// legacy refresh token prefix, which is only still accepted), so a kind
// added later cannot start like another unnoticed.
func TestEveryDeclaredPrefixIsInItsTable(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "prefixes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids, secrets := bokat.IDPrefixes(), bokat.SecretPrefixes()
	declared := 0
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range spec.Names {
			lit, ok := spec.Values[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || !strings.HasSuffix(name.Name, "Prefix") {
				continue
			}
			value, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			declared++
			switch {
			case name.Name == "LegacyRefreshTokenPrefix":
				if slices.Contains(secrets, value) {
					t.Errorf("%s (%q) is issued again", name.Name, value)
				}
			case strings.HasSuffix(name.Name, "IDPrefix"):
				if !slices.Contains(ids, value) {
					t.Errorf("id prefix %s (%q) is not in IDPrefixes", name.Name, value)
				}
			default:
				if !slices.Contains(secrets, value) {
					t.Errorf("secret prefix %s (%q) is not in SecretPrefixes", name.Name, value)
				}
			}
		}
		return false
	})
	if want := len(ids) + len(secrets) + 1; declared != want {
		t.Errorf("prefixes.go declares %d prefixes, the tables hold %d and the legacy one", declared, want-1)
	}
}
