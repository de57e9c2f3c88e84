package booking

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"bokat"
)

func key(id string, fill byte) Key { return Key{ID: id, Secret: bytes.Repeat([]byte{fill}, 32)} }

func mustKeyring(tb testing.TB, keys ...Key) *Keyring {
	tb.Helper()
	k, err := NewKeyring(keys...)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func sampleClaims(now time.Time) OptionClaims {
	return OptionClaims{
		IssuedAt: now, ExpiresAt: now.Add(15 * time.Minute),
		ProviderID: "prv_sthlm_vvs_1", ServiceID: "vvs_install_faucet_standard", VerticalID: "vvs", JobTypeID: "install_faucet",
		SlotStart: now.Add(26 * time.Hour), SlotEnd: now.Add(27*time.Hour + 30*time.Minute),
		AmountSEK: 1890, PricingModel: "flat", PriceType: "avg_fixed", Quantity: 1,
		TermsVersion: "fixed_price_terms_v1:vvs_install_faucet_standard", Postcode: "11345",
	}
}

func wantCode(t *testing.T, err error, code bokat.Code) *bokat.Error {
	t.Helper()
	var e *bokat.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
	return e
}

func TestSignAndVerifyRoundTrip(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	k := mustKeyring(t, key("k1", 1))
	c := sampleClaims(now)
	c.DestinationPostcode = "11822"
	c.UnitPriceSEK, c.Quantity, c.Unit, c.MinimumChargeSEK = 45, 62.5, "kvm", 2500
	c.Labour, c.TaxRulesVersion = bokat.StatedLabour(0), "rut_2025-01-01"
	token, err := k.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, "bo1.k1.") || len(token) < 20 || len(token) > 24000 {
		t.Fatalf("token %q has the wrong form", token)
	}
	got, err := k.Verify(token, now.Add(time.Minute))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got.KeyID != "k1" || got.Nonce == "" {
		t.Errorf("key id %q nonce %q", got.KeyID, got.Nonce)
	}
	c.KeyID, c.Nonce = got.KeyID, got.Nonce
	if got != c {
		t.Errorf("claims =\n%+v\nwant\n%+v", got, c)
	}
	// A labour share not stated stays not stated (not 0 %).
	plain, _ := k.Sign(sampleClaims(now))
	if got, err := k.Verify(plain, now); err != nil || got.Labour.Stated || got.TaxRulesVersion != "" {
		t.Errorf("claims without a labour share read back as %+v, %q (%v)", got.Labour, got.TaxRulesVersion, err)
	}
	other, _ := k.Sign(sampleClaims(now))
	again, _ := k.Sign(sampleClaims(now))
	if other == again {
		t.Error("two signatures of the same claims are equal; the nonce must make each option id unique")
	}
}

// tamper returns token with its payload rewritten by edit, keeping the
// original signature.
func tamper(t testing.TB, token string, edit func(map[string]any)) string {
	t.Helper()
	parts := strings.Split(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	raw, _ = json.Marshal(m)
	parts[2] = base64.RawURLEncoding.EncodeToString(raw)
	return strings.Join(parts, ".")
}

func TestVerifyRejectsWhatThisServiceDidNotIssue(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	k := mustKeyring(t, key("k1", 1))
	token, err := k.Sign(sampleClaims(now))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	stranger := mustKeyring(t, key("k1", 9)) // same id, other secret
	forged, _ := stranger.Sign(sampleClaims(now))
	unknown, _ := mustKeyring(t, key("k7", 1)).Sign(sampleClaims(now))

	overLabour := sampleClaims(now)
	overLabour.Labour = bokat.StatedLabour(101)
	labourOutOfRange, _ := k.Sign(overLabour)
	tests := []struct{ name, token string }{
		{"labour share above 100 %", labourOutOfRange},
		{"cheaper price", tamper(t, token, func(m map[string]any) { m["a"] = 1 })},
		{"other provider", tamper(t, token, func(m map[string]any) { m["p"] = "prv_other" })},
		{"later expiry", tamper(t, token, func(m map[string]any) { m["exp"] = now.Add(24 * time.Hour).UnixMilli() })},
		{"other key id in header", strings.Join([]string{parts[0], "k0", parts[2], parts[3]}, ".")},
		{"signature cut", token[:len(token)-4]},
		{"signature not base64", parts[0] + "." + parts[1] + "." + parts[2] + ".!!!"},
		{"payload not base64", parts[0] + "." + parts[1] + ".%%%." + parts[3]},
		{"forged with another secret", forged},
		{"unknown key id", unknown},
		{"wrong version", "bo2" + token[3:]},
		{"too few parts", parts[0] + "." + parts[1] + "." + parts[2]},
		{"not a token", "hello-this-is-not-an-option"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := k.Verify(tc.token, now)
			e := wantCode(t, err, bokat.CodeBookingOptionInvalid)
			if e.OptionRefreshRequired || e.SafeNextStep == "" {
				t.Errorf("invalid option error = %+v", e)
			}
		})
	}
}

func TestVerifyExpiry(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	k := mustKeyring(t, key("k1", 1))
	token, _ := k.Sign(sampleClaims(now))
	if _, err := k.Verify(token, now.Add(15*time.Minute-time.Millisecond)); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
	for _, at := range []time.Time{now.Add(15 * time.Minute), now.Add(time.Hour)} {
		_, err := k.Verify(token, at)
		e := wantCode(t, err, bokat.CodeBookingOptionExpired)
		if !e.OptionRefreshRequired || !strings.Contains(e.SafeNextStep, "Search booking options again") ||
			!strings.Contains(e.SafeNextStep, "explicit choice") {
			t.Errorf("expired error = %+v", e)
		}
	}
}

func TestKeyRotation(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	old := mustKeyring(t, key("k0", 1))
	oldToken, _ := old.Sign(sampleClaims(now))

	rotated, err := ParseKeyring("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32)) +
		", k0:" + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if rotated.SigningKeyID() != "k1" {
		t.Errorf("signing key = %s, want k1 (the first)", rotated.SigningKeyID())
	}
	if c, err := rotated.Verify(oldToken, now); err != nil || c.KeyID != "k0" {
		t.Fatalf("the old key's option after rotation: %+v, %v", c, err)
	}
	newToken, _ := rotated.Sign(sampleClaims(now))
	if !strings.HasPrefix(newToken, "bo1.k1.") {
		t.Fatalf("new option %q is not signed with k1", newToken)
	}
	// Once the old key is dropped its options are no longer accepted.
	retired := mustKeyring(t, key("k1", 2))
	if _, err := retired.Verify(newToken, now); err != nil {
		t.Errorf("new option with k1 only: %v", err)
	}
	wantCode(t, func() error { _, err := retired.Verify(oldToken, now); return err }(), bokat.CodeBookingOptionInvalid)
}

func TestParseKeyringRejectsBadSpecs(t *testing.T) {
	t.Parallel()
	good := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	for name, spec := range map[string]string{
		"empty":        "",
		"no id":        good,
		"short key":    "k1:" + base64.StdEncoding.EncodeToString([]byte("short")),
		"not base64":   "k1:***",
		"bad id":       "k 1:" + good,
		"duplicate id": "k1:" + good + ",k1:" + good,
	} {
		if _, err := ParseKeyring(spec); err == nil {
			t.Errorf("%s: ParseKeyring(%q) accepted it", name, spec)
		}
	}
}

func TestNilKeyringAnswersSigningNotConfigured(t *testing.T) {
	t.Parallel()
	var k *Keyring
	_, err := k.Sign(sampleClaims(time.Now()))
	wantCode(t, err, bokat.CodeOptionSigningNotConfigured)
	_, err = k.Verify("bo1.k1.e30.c2ln", time.Now())
	e := wantCode(t, err, bokat.CodeOptionSigningNotConfigured)
	if e.RetryAfter <= 0 {
		t.Error("no Retry-After on option_signing_not_configured")
	}
}

func TestPayloadEncodingRoundTripsAnyText(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	k := mustKeyring(t, key("k1", 1))
	for _, text := range []string{`quote " and \ backslash`, "tab\tnewline\n\x01", "fönster", "ünïcödé ✓", ""} {
		c := sampleClaims(now)
		c.Unit, c.ProviderID, c.Quantity = text, "p"+text, 1e-7
		token, err := k.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := k.Verify(token, now)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		c.KeyID, c.Nonce = got.KeyID, got.Nonce
		if got != c {
			t.Errorf("%q: claims =\n%+v\nwant\n%+v", text, got, c)
		}
	}
}

// flipUnusedBits returns s (unpadded base64url whose length leaves unused
// low bits in its last character) with the lowest of those bits flipped: a
// lenient decoder reads the same bytes from it, a strict one refuses it.
func flipUnusedBits(t *testing.T, s string) string {
	t.Helper()
	if len(s)%4 == 0 {
		t.Fatalf("%q has no unused bits", s)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, s[len(s)-1])
	flipped := s[:len(s)-1] + string(alphabet[i^1])
	lenient, err1 := base64.RawURLEncoding.DecodeString(flipped)
	canonical, err2 := base64.RawURLEncoding.DecodeString(s)
	if err1 != nil || err2 != nil || !bytes.Equal(lenient, canonical) {
		t.Fatalf("flipping %q to %q changed the decoded bytes (%v, %v)", s, flipped, err1, err2)
	}
	return flipped
}

// An option has exactly one id: another spelling of the same signature or
// payload bytes is refused even when it is correctly signed.
func TestVerifyRefusesNonCanonicalBase64(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	k1 := key("k1", 1)
	k := mustKeyring(t, k1)
	// A payload whose encoding ends in a partial group, so its last
	// character has unused bits.
	var token string
	for pad := ""; ; pad += "x" {
		c := sampleClaims(now)
		c.Unit = pad
		var err error
		if token, err = k.Sign(c); err != nil {
			t.Fatal(err)
		}
		if len(strings.Split(token, ".")[2])%4 != 0 {
			break
		}
	}
	if _, err := k.Verify(token, now); err != nil {
		t.Fatalf("the issued option: %v", err)
	}
	parts := strings.Split(token, ".")

	sigFlipped := strings.Join([]string{parts[0], parts[1], parts[2], flipUnusedBits(t, parts[3])}, ".")
	// The payload flipped and signed anew, as if by the key holder: only the
	// strict decoding of the payload can refuse it.
	signed := strings.Join([]string{parts[0], parts[1], flipUnusedBits(t, parts[2])}, ".")
	payloadFlipped := signed + "." + base64.RawURLEncoding.EncodeToString(mac(k1.Secret, signed))

	for name, token := range map[string]string{"signature": sigFlipped, "payload": payloadFlipped} {
		t.Run(name, func(t *testing.T) {
			_, err := k.Verify(token, now)
			wantCode(t, err, bokat.CodeBookingOptionInvalid)
		})
	}
}

// TestSignUsesEachRandomByteOnce: nonces are read for several signatures
// at a time, and every nonce is 128 bits of the random stream that no other
// nonce used (a pooled signer the collector drops leaves its unused bytes
// unused).
func TestSignUsesEachRandomByteOnce(t *testing.T) {
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	k := mustKeyring(t, key("k1", 1))
	var stream bytes.Buffer
	for i := range 1 << 12 {
		stream.WriteByte(byte(i*7 + i>>8))
	}
	random := bytes.Clone(stream.Bytes())
	k.random = &stream
	used := map[int]bool{}
	for range 3*len(signer{}.entropy)/nonceSize + 5 {
		token, err := k.Sign(sampleClaims(now))
		if err != nil {
			t.Fatal(err)
		}
		c, err := k.Verify(token, now)
		if err != nil {
			t.Fatal(err)
		}
		nonce, err := base64.RawURLEncoding.DecodeString(c.Nonce)
		if err != nil || len(nonce) != nonceSize {
			t.Fatalf("nonce %q: %v", c.Nonce, err)
		}
		at := -1
		for i := 0; i+nonceSize <= len(random); i += nonceSize {
			if bytes.Equal(random[i:i+nonceSize], nonce) && !used[i] {
				at = i
				break
			}
		}
		if at < 0 {
			t.Fatalf("nonce %x is not 16 bytes of the random stream unused so far", nonce)
		}
		used[at] = true
	}
}
