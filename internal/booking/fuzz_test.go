package booking

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"bokat"
)

// fuzzNow is the clock of the option fuzz targets.
var fuzzNow = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

// fuzzToken signs c with a fixed nonce, so that seeds are reproducible.
func fuzzToken(tb testing.TB, k *Keyring, c OptionClaims) string {
	tb.Helper()
	c.Nonce = "fuzz-nonce-seed0"
	token, err := k.Sign(c)
	if err != nil {
		tb.Fatal(err)
	}
	return token
}

// FuzzOptionVerify feeds Verify arbitrary strings. Properties: it never
// panics; it refuses with booking_option_invalid or, for an expired but
// genuine option, booking_option_expired; and it accepts only what Sign
// (for bo1 ids, the earlier releases' Sign) produces: signing the claims
// Verify returned gives back exactly the verified string. A valid token of
// either format with any one byte changed never verifies.
func FuzzOptionVerify(f *testing.F) {
	k := mustKeyring(f, key("k1", 1), key("k0", 2))
	old := mustKeyring(f, key("k0", 2))
	c := sampleClaims(fuzzNow)
	perUnit := c
	perUnit.DestinationPostcode, perUnit.Locale = "11822", "en-GB"
	perUnit.UnitPriceSEK, perUnit.Quantity, perUnit.Unit, perUnit.MinimumChargeSEK = 45, 62.5, "kvm", 2500
	perUnit.Labour, perUnit.TaxRulesVersion = bokat.StatedLabour(0), "rut_2025-01-01"
	token := fuzzToken(f, k, c)
	c.Nonce = "AAECAwQFBgcICQoLDA0ODw"
	tokenV1 := k.signV1(f, c)
	c.Nonce = ""
	parts := strings.Split(token, ".")
	// Seeds: the tokens and refusals of the option tests.
	for _, s := range []string{
		token,
		tokenV1,
		goldenV1,
		fuzzToken(f, k, perUnit),
		fuzzToken(f, old, c), // signed with the older key, still verifying
		tamper(f, tokenV1, func(m map[string]any) { m["a"] = 1 }),
		tamper(f, tokenV1, func(m map[string]any) { m["exp"] = fuzzNow.Add(24 * time.Hour).UnixMilli() }),
		tamperV2(f, k, token, func(c *OptionClaims) { c.AmountSEK = 1 }),
		tamperV2(f, k, token, func(c *OptionClaims) { c.ExpiresAt = fuzzNow.Add(24 * time.Hour) }),
		strings.Join([]string{parts[0], "k0", parts[2], parts[3]}, "."),
		token[:len(token)-4],
		parts[0] + "." + parts[1] + "." + parts[2] + ".!!!",
		parts[0] + "." + parts[1] + ".%%%." + parts[3],
		fuzzToken(f, mustKeyring(f, key("k1", 9)), c),
		fuzzToken(f, mustKeyring(f, key("k7", 1)), c),
		"bo1" + token[3:],
		"bo2" + tokenV1[3:],
		parts[0] + "." + parts[1] + "." + parts[2],
		"hello-this-is-not-an-option",
		"",
		"bo1...",
		"bo2...",
	} {
		f.Add(s, uint16(5), byte(1))
	}
	f.Fuzz(func(t *testing.T, s string, pos uint16, flip byte) {
		checkVerify(t, k, s)
		// Mutation: one character of a genuine token changed to another
		// base64url character (or, for '.', to any other byte). This holds
		// only with strict (canonical) base64url decoding of the signature
		// and payload: a last character that differs only in its unused low
		// bits must be refused too (issue 11, item 4).
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		genuine := []byte(token)
		if flip&0x80 != 0 {
			genuine = []byte(tokenV1)
		}
		i := len(genuine) - 1 - int(pos)%len(genuine) // counted from the end, where the signature is
		if j := strings.IndexByte(alphabet, genuine[i]); j >= 0 {
			genuine[i] = alphabet[(j+1+int(flip)%63)%64]
		} else {
			genuine[i] ^= max(flip, 1)
		}
		if _, err := k.Verify(string(genuine), fuzzNow); bokat.ErrorCode(err) != bokat.CodeBookingOptionInvalid {
			t.Fatalf("Verify of a token with character %d changed (%q) = %v; want booking_option_invalid", i, genuine, err)
		}
	})
}

// checkVerify asserts the properties of Verify for one string.
func checkVerify(t *testing.T, k *Keyring, s string) {
	t.Helper()
	got, err := k.Verify(s, fuzzNow)
	var e *bokat.Error
	if err != nil {
		if !errors.As(err, &e) {
			t.Fatalf("Verify(%q) = %v (%T); want a *bokat.Error", s, err, err)
		}
		switch e.Code {
		case bokat.CodeBookingOptionInvalid:
			if got != (OptionClaims{}) {
				t.Fatalf("Verify(%q) refused the option but returned claims %+v", s, got)
			}
			return
		case bokat.CodeBookingOptionExpired:
			if !e.OptionRefreshRequired || fuzzNow.Before(got.ExpiresAt) {
				t.Fatalf("Verify(%q) = expired %+v with expiry %s", s, e, got.ExpiresAt)
			}
		default:
			t.Fatalf("Verify(%q) = code %s; want booking_option_invalid or booking_option_expired", s, e.Code)
		}
	}
	// Only what Sign produced verifies: re-signing the claims reproduces s.
	// As in the mutation check, this relies on canonical base64url.
	if got.ProviderID == "" || got.ServiceID == "" || !got.ExpiresAt.After(got.IssuedAt) || !got.SlotEnd.After(got.SlotStart) {
		t.Fatalf("Verify(%q) accepted incomplete claims %+v", s, got)
	}
	keyring := k
	if got.KeyID != k.SigningKeyID() {
		secret, ok := k.verify[got.KeyID]
		if !ok {
			t.Fatalf("Verify(%q) accepted key id %q it does not hold", s, got.KeyID)
		}
		keyring = mustKeyring(t, Key{ID: got.KeyID, Secret: secret})
	}
	var again string
	if strings.HasPrefix(s, tokenPrefixV1+".") {
		again = keyring.signV1(t, got)
	} else {
		again, err = keyring.Sign(got)
	}
	if err != nil {
		t.Fatalf("Sign(Verify(%q)) = %v", s, err)
	}
	if again != s {
		t.Fatalf("Verify accepted %q, but its claims sign as %q", s, again)
	}
}

// FuzzOptionSignVerify signs arbitrary claims and verifies them: the
// claims come back unchanged (instants at millisecond precision), and
// Verify accepts the token until its expiry only.
func FuzzOptionSignVerify(f *testing.F) {
	k := mustKeyring(f, key("k1", 1))
	c := sampleClaims(fuzzNow)
	f.Add(c.ProviderID, c.ServiceID, c.Unit, c.Postcode, c.Locale, c.IssuedAt.UnixMilli(), int64(15*60_000), c.SlotStart.UnixMilli(), int64(90*60_000), c.AmountSEK, c.Quantity)
	f.Add("p"+`quote " and \ backslash`, "s", "kvm", "11345", "en-GB", c.IssuedAt.UnixMilli(), int64(1), int64(0), int64(1), int64(-5), 62.5)
	f.Add("ptab\tnewline\n\x01", "ünïcödé ✓", "fönster", "", "sv-SE", int64(-1), int64(1<<40), int64(-1<<40), int64(1<<20), int64(math.MaxInt64), 1e-7)
	f.Fuzz(func(t *testing.T, provider, service, unit, postcode, locale string, issued, ttl, slotStart, slotLen, amount int64, quantity float64) {
		// Claims are built from the catalog, the supply file and validated
		// requests: complete, valid UTF-8, finite, and within the years a
		// time.Time round-trips through Unix milliseconds.
		const maxMilli = 1 << 52
		for _, s := range []string{provider, service, unit, postcode, locale} {
			if !utf8.ValidString(s) {
				t.Skip()
			}
		}
		if provider == "" || service == "" || math.IsNaN(quantity) || math.IsInf(quantity, 0) ||
			ttl <= 0 || slotLen <= 0 || ttl > maxMilli || slotLen > maxMilli ||
			issued < -maxMilli || issued > maxMilli || slotStart < -maxMilli || slotStart > maxMilli {
			t.Skip()
		}
		want := OptionClaims{
			IssuedAt: time.UnixMilli(issued).UTC(), ExpiresAt: time.UnixMilli(issued + ttl).UTC(),
			ProviderID: provider, ServiceID: service,
			SlotStart: time.UnixMilli(slotStart).UTC(), SlotEnd: time.UnixMilli(slotStart + slotLen).UTC(),
			AmountSEK: amount, PricingModel: "per_sqm", PriceType: "avg_unit", Quantity: quantity, Unit: unit,
			TermsVersion: "fixed_price_terms_v1:" + service, Postcode: postcode, Locale: locale,
		}
		// The catalog names the vertical and job type of its services; a
		// service it does not know has none.
		want.VerticalID, want.JobTypeID = k.jobOf(service)
		token, err := k.Sign(want)
		if err != nil {
			t.Fatalf("Sign(%+v) = %v", want, err)
		}
		got, err := k.Verify(token, want.IssuedAt)
		if err != nil {
			t.Fatalf("Verify(Sign(%+v)) = %v", want, err)
		}
		want.KeyID, want.Nonce = "k1", got.Nonce
		if got != want {
			t.Fatalf("claims =\n%+v\nwant\n%+v", got, want)
		}
		if _, err := k.Verify(token, want.ExpiresAt); bokat.ErrorCode(err) != bokat.CodeBookingOptionExpired {
			t.Fatalf("Verify at the expiry = %v; want booking_option_expired", err)
		}
	})
}
