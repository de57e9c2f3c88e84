package booking

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/catalog"
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
	// The longest claims a search gives (a move priced per unit, with a
	// RUT estimate) stay within 200 bytes.
	if !strings.HasPrefix(token, "bo2.k1.") || len(token) < 20 || len(token) > 200 {
		t.Fatalf("token %q (%d bytes) has the wrong form", token, len(token))
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
	// A terms version other than the service's own is carried, whatever
	// it shares with the own one.
	for _, terms := range []string{"fixed_price_terms_v1:vvs_install_faucet", "fixed_price_terms_v0:vvs_install_faucet_standard", ""} {
		c := sampleClaims(now)
		c.TermsVersion = terms
		token, err := k.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := k.Verify(token, now); err != nil || got.TermsVersion != terms {
			t.Errorf("terms %q read back as %q (%v)", terms, got.TermsVersion, err)
		}
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

// tamper returns the bo1 token with its payload rewritten by edit, keeping
// the original signature.
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

// tamperV2 returns the bo2 token with its claims (nonce included) rewritten
// by edit, keeping the original tag.
func tamperV2(t testing.TB, k *Keyring, token string, edit func(*OptionClaims)) string {
	t.Helper()
	parts := strings.Split(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	c, ok := k.readClaims(raw)
	if !ok {
		t.Fatalf("the payload of %q does not read", token)
	}
	edit(&c)
	nonce, _ := base64.RawURLEncoding.DecodeString(c.Nonce)
	if raw, err = appendClaims(nil, c, nonce); err != nil {
		t.Fatal(err)
	}
	parts[2] = base64.RawURLEncoding.EncodeToString(raw)
	return strings.Join(parts, ".")
}

// signRawV2 returns a bo2 token of the payload raw, tagged with key as Sign
// would: only the payload's own rules can refuse it.
func signRawV2(key Key, raw []byte) string {
	signed := tokenPrefix + "." + key.ID + "." + base64.RawURLEncoding.EncodeToString(raw)
	return signed + "." + base64.RawURLEncoding.EncodeToString(mac(key.Secret, signed)[:tagBytes])
}

func wantInvalid(t *testing.T, k *Keyring, token string, now time.Time) {
	t.Helper()
	_, err := k.Verify(token, now)
	e := wantCode(t, err, bokat.CodeBookingOptionInvalid)
	if e.OptionRefreshRequired || e.SafeNextStep == "" {
		t.Errorf("invalid option error = %+v", e)
	}
}

// Every part of a bo2 id is covered by its tag: the version, the key id,
// each claim of the payload, the nonce, and the tag itself.
func TestVerifyRejectsWhatThisServiceDidNotIssue(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	k := mustKeyring(t, key("k1", 1), key("k0", 2))
	c := sampleClaims(now)
	c.Labour, c.TaxRulesVersion, c.Locale = bokat.StatedLabour(80), "rot_2025-01-01", "sv-SE"
	token, err := k.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Verify(token, now); err != nil {
		t.Fatalf("the issued option: %v", err)
	}
	parts := strings.Split(token, ".")
	stranger := mustKeyring(t, key("k1", 9)) // same id, other secret
	forged, _ := stranger.Sign(c)
	unknown, _ := mustKeyring(t, key("k7", 1)).Sign(c)
	tag, _ := base64.RawURLEncoding.DecodeString(parts[3])
	fullTag := base64.RawURLEncoding.EncodeToString(mac(key("k1", 1).Secret, strings.Join(parts[:3], ".")))

	edits := map[string]func(*OptionClaims){
		"issued earlier":       func(c *OptionClaims) { c.IssuedAt = c.IssuedAt.Add(-time.Hour) },
		"later expiry":         func(c *OptionClaims) { c.ExpiresAt = c.ExpiresAt.Add(24 * time.Hour) },
		"other nonce":          func(c *OptionClaims) { c.Nonce = "AAAAAAAAAAAAAAAAAAAAAAAA"[:16] },
		"other provider":       func(c *OptionClaims) { c.ProviderID = "prv_other" },
		"other service":        func(c *OptionClaims) { c.ServiceID = "vvs_replace_mixer" },
		"earlier slot":         func(c *OptionClaims) { c.SlotStart = c.SlotStart.Add(-time.Hour) },
		"longer slot":          func(c *OptionClaims) { c.SlotEnd = c.SlotEnd.Add(time.Hour) },
		"cheaper price":        func(c *OptionClaims) { c.AmountSEK = 1 },
		"other pricing model":  func(c *OptionClaims) { c.PricingModel = "per_hour" },
		"other price type":     func(c *OptionClaims) { c.PriceType = "starting_price" },
		"other postcode":       func(c *OptionClaims) { c.Postcode = "11346" },
		"other locale":         func(c *OptionClaims) { c.Locale = "en-GB" },
		"other labour share":   func(c *OptionClaims) { c.Labour = bokat.StatedLabour(100) },
		"no labour share":      func(c *OptionClaims) { c.Labour = bokat.LabourShare{} },
		"other tax rules":      func(c *OptionClaims) { c.TaxRulesVersion = "rot_2026-01-01" },
		"added destination":    func(c *OptionClaims) { c.DestinationPostcode = "11822" },
		"added unit price":     func(c *OptionClaims) { c.UnitPriceSEK = 45 },
		"other quantity":       func(c *OptionClaims) { c.Quantity = 2 },
		"added unit":           func(c *OptionClaims) { c.Unit = "st" },
		"added minimum charge": func(c *OptionClaims) { c.MinimumChargeSEK = 100 },
		"other terms":          func(c *OptionClaims) { c.TermsVersion = "fixed_price_terms_v0:x" },
	}
	tests := map[string]string{
		"other key id in header":     strings.Join([]string{parts[0], "k0", parts[2], parts[3]}, "."),
		"bo1 version":                "bo1" + token[3:],
		"unknown version":            "bo3" + token[3:],
		"tag cut":                    token[:len(token)-4],
		"tag one bit changed":        parts[0] + "." + parts[1] + "." + parts[2] + "." + base64.RawURLEncoding.EncodeToString(append([]byte{tag[0] ^ 1}, tag[1:]...)),
		"tag of the whole HMAC":      parts[0] + "." + parts[1] + "." + parts[2] + "." + fullTag,
		"tag not base64":             parts[0] + "." + parts[1] + "." + parts[2] + ".!!!",
		"payload not base64":         parts[0] + "." + parts[1] + ".%%%." + parts[3],
		"payload cut":                parts[0] + "." + parts[1] + "." + parts[2][:len(parts[2])-4] + "." + parts[3],
		"forged with another secret": forged,
		"unknown key id":             unknown,
		"too few parts":              parts[0] + "." + parts[1] + "." + parts[2],
		"too many parts":             token + "." + parts[3],
		"not a token":                "hello-this-is-not-an-option",
	}
	for name, edit := range edits {
		tests[name] = tamperV2(t, k, token, edit)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if tc == token {
				t.Fatal("the edit left the token unchanged")
			}
			wantInvalid(t, k, tc, now)
		})
	}
}

// goldenV1 is an option id as the release before bo2 issued it (key k0,
// secret 32 bytes of 2, at 2026-11-23 08:00 UTC, ROT labour share 80 %).
const goldenV1 = "bo1.k0.eyJpYXQiOjE3OTU0MjA4MDAwMDAsImV4cCI6MTc5NTQyMTcwMDAwMCwibiI6IkFBRUNBd1FGQmdjSUNRb0xEQTBPRHciLCJwIjoicHJ2X3N0aGxtX3Z2c18xIiwicyI6InZ2c19pbnN0YWxsX2ZhdWNldF9zdGFuZGFyZCIsInYiOiJ2dnMiLCJqIjoiaW5zdGFsbF9mYXVjZXQiLCJzcyI6MTc5NTUxNDQwMDAwMCwic2UiOjE3OTU1MTk4MDAwMDAsImEiOjE4OTAsInBtIjoiZmxhdCIsInB0IjoiYXZnX2ZpeGVkIiwicSI6MSwicGMiOiIxMTM0NSIsImxwIjo4MCwidHYiOiJyb3RfMjAyNS0wMS0wMSJ9.VqK9NtK1WGKhm-8m9X9h2P65sSZAtu3PgbpNQeEqN-s"

// Ids issued before bo2 keep verifying until they expire, with every claim
// they carry, and stay as strict as they were.
func TestVerifyAcceptsBo1IssuedBefore(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	k := mustKeyring(t, key("k1", 1), key("k0", 2))
	want := sampleClaims(now)
	want.KeyID, want.Nonce = "k0", "AAECAwQFBgcICQoLDA0ODw"
	want.Labour, want.TaxRulesVersion = bokat.StatedLabour(80), "rot_2025-01-01"
	got, err := k.Verify(goldenV1, now.Add(time.Minute))
	if err != nil {
		t.Fatalf("Verify of a bo1 id: %v", err)
	}
	if got != want {
		t.Errorf("claims =\n%+v\nwant\n%+v", got, want)
	}
	_, err = k.Verify(goldenV1, now.Add(15*time.Minute))
	wantCode(t, err, bokat.CodeBookingOptionExpired)

	perUnit := sampleClaims(now)
	perUnit.DestinationPostcode, perUnit.Locale = "11822", "en-GB"
	perUnit.UnitPriceSEK, perUnit.Quantity, perUnit.Unit, perUnit.MinimumChargeSEK = 45, 62.5, "kvm", 2500
	token := k.signV1(t, perUnit)
	if got, err := k.Verify(token, now); err != nil || got.Unit != "kvm" || got.Quantity != 62.5 || got.KeyID != "k1" {
		t.Errorf("a per-unit bo1 id reads back as %+v (%v)", got, err)
	}
	parts := strings.Split(token, ".")
	for name, tc := range map[string]string{
		"cheaper price":    tamper(t, token, func(m map[string]any) { m["a"] = 1 }),
		"other provider":   tamper(t, token, func(m map[string]any) { m["p"] = "prv_other" }),
		"later expiry":     tamper(t, token, func(m map[string]any) { m["exp"] = now.Add(24 * time.Hour).UnixMilli() }),
		"other key id":     strings.Join([]string{parts[0], "k0", parts[2], parts[3]}, "."),
		"signature cut":    token[:len(token)-4],
		"signature of 128": parts[0] + "." + parts[1] + "." + parts[2] + "." + parts[3][:22],
		"read as bo2":      "bo2" + token[3:],
	} {
		t.Run(name, func(t *testing.T) { wantInvalid(t, k, tc, now) })
	}
	over := sampleClaims(now)
	over.Labour = bokat.StatedLabour(101)
	wantInvalid(t, k, k.signV1(t, over), now)
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
	if !strings.HasPrefix(newToken, "bo2.k1.") {
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
// payload bytes is refused even when it is correctly signed, in both
// formats.
func TestVerifyRefusesNonCanonicalBase64(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	k1 := key("k1", 1)
	k := mustKeyring(t, k1)
	for version, sign := range map[string]func(OptionClaims) string{
		"bo2": func(c OptionClaims) string { token, _ := k.Sign(c); return token },
		"bo1": func(c OptionClaims) string { return k.signV1(t, c) },
	} {
		// A payload whose encoding ends in a partial group, so its last
		// character has unused bits.
		var token string
		for pad := ""; ; pad += "x" {
			c := sampleClaims(now)
			c.Unit = pad
			if token = sign(c); len(strings.Split(token, ".")[2])%4 != 0 {
				break
			}
		}
		if _, err := k.Verify(token, now); err != nil {
			t.Fatalf("the issued %s option: %v", version, err)
		}
		parts := strings.Split(token, ".")
		sigFlipped := strings.Join([]string{parts[0], parts[1], parts[2], flipUnusedBits(t, parts[3])}, ".")
		// The payload flipped and signed anew, as if by the key holder: only
		// the strict decoding of the payload can refuse it.
		signed := strings.Join([]string{parts[0], parts[1], flipUnusedBits(t, parts[2])}, ".")
		tag := mac(k1.Secret, signed)
		if version == "bo2" {
			tag = tag[:tagBytes]
		}
		payloadFlipped := signed + "." + base64.RawURLEncoding.EncodeToString(tag)
		for name, token := range map[string]string{"signature": sigFlipped, "payload": payloadFlipped} {
			t.Run(version+"/"+name, func(t *testing.T) { wantInvalid(t, k, token, now) })
		}
	}
}

// A bo2 payload has one form for given claims: any other bytes that would
// read as the same (or as impossible) claims are refused, even correctly
// tagged.
func TestVerifyRefusesNonCanonicalPayload(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	k1 := key("k1", 1)
	k := mustKeyring(t, k1)
	nonce := bytes.Repeat([]byte{7}, nonceBytes)
	raw, err := appendClaims(nil, sampleClaims(now), nonce)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Verify(signRawV2(k1, raw), now); err != nil {
		t.Fatalf("the canonical payload, tagged anew: %v", err)
	}
	// Offsets of the expiry, the slot length, the codes and the flags; the
	// sample claims carry no optional claim, so the postcode ends the payload.
	r := &claimsReader{b: raw}
	at := func() int { return len(raw) - len(r.b) }
	r.varint()
	expiryAt := at()
	r.uvarint()
	r.bytes(nonceBytes)
	r.text()
	r.text()
	r.varint()
	slotLenAt := at()
	r.uvarint()
	r.varint()
	codesAt := at()
	r.bytes(2)
	flagsAt := at()
	if raw[flagsAt] != 0 {
		t.Fatalf("the sample claims carry flags %#x", raw[flagsAt])
	}
	splice := func(from, to int, with ...byte) []byte {
		return slices.Concat(raw[:from], with, raw[to:])
	}
	withFlags := func(flags uint64, tail ...byte) []byte {
		return append(splice(flagsAt, flagsAt+1, binary.AppendUvarint(nil, flags)...), tail...)
	}
	own := catalog.TermsVersionPrefix + sampleClaims(now).ServiceID
	set := func(i int, v byte) []byte { b := bytes.Clone(raw); b[i] = v; return b }
	for name, payload := range map[string][]byte{
		"overlong varint":             splice(expiryAt-1, expiryAt, raw[expiryAt-1]|0x80, 0),
		"byte left over":              append(bytes.Clone(raw), 0),
		"cut short":                   raw[:len(raw)-1],
		"expiry at issue":             splice(expiryAt, expiryAt+uvarintLen(raw[expiryAt:]), 0),
		"unknown flag":                withFlags(1 << 9),
		"unit flagged but empty":      withFlags(hasUnit, 0),
		"quantity one carried":        withFlags(hasQuantity, binary.BigEndian.AppendUint64(nil, math.Float64bits(1))...),
		"service's own terms carried": withFlags(hasTerms, append([]byte{byte(len(own))}, own...)...),
		"labour share above 100":      withFlags(hasLabour, 101),
		"unknown pricing model code":  set(codesAt, byte(len(pricingModels))),
		"unknown price type code":     set(codesAt+1, byte(len(priceTypes))),
		"empty slot":                  splice(slotLenAt, slotLenAt+uvarintLen(raw[slotLenAt:]), 0),
	} {
		t.Run(name, func(t *testing.T) { wantInvalid(t, k, signRawV2(k1, payload), now) })
	}
}

func uvarintLen(b []byte) int { _, n := binary.Uvarint(b); return n }
