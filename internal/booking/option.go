package booking

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"bokat"
	"bokat/internal/catalog"
)

// OptionClaims are the facts a booking option carries from search to
// confirmation. The booking_option_id is these claims, signed: confirmation
// verifies the signature and expiry (Keyring.Verify), then revalidates each
// fact against the current supply (Search.Revalidate).
type OptionClaims struct {
	// KeyID names the signing key; Sign sets it.
	KeyID string
	// IssuedAt is the time of the search; ExpiresAt ends the option's life.
	IssuedAt, ExpiresAt time.Time
	// Nonce makes every option id unique; Sign sets it when empty.
	Nonce string

	ProviderID string
	ServiceID  string
	VerticalID string
	JobTypeID  string
	// SlotStart and SlotEnd bound the job [SlotStart, SlotEnd).
	SlotStart, SlotEnd time.Time

	// AmountSEK is the price of the option in whole SEK.
	AmountSEK    int64
	PricingModel string
	PriceType    string
	// UnitPriceSEK, Quantity, Unit and MinimumChargeSEK are the pricing facts
	// of per-unit services; Quantity is 1 and the others zero for flat and
	// starting-price services.
	UnitPriceSEK     int64
	Quantity         float64
	Unit             string
	MinimumChargeSEK int64
	// Labour is the provider's stated labour share of AmountSEK, and
	// TaxRulesVersion the version of the ROT/RUT rule the option's estimate
	// came from ("" for none): confirmation recomputes the estimate from
	// the claims and refuses the option when either no longer holds.
	Labour          bokat.LabourShare
	TaxRulesVersion string

	// TermsVersion is "fixed_price_terms_v1:<service_id>".
	TermsVersion string
	// Postcode is the searched postcode, five digits ("11345");
	// DestinationPostcode that of a move's destination, or "".
	Postcode            string
	DestinationPostcode string
	// Locale is the language the search asked for ("sv-SE", "en-GB"); a
	// confirmation labels the booking's slot in it. Empty means "sv-SE".
	Locale string
}

// tokenPrefix starts every booking_option_id issued now and names its
// format, version 2: "bo2.<key id>.<payload>.<tag>", the payload being the
// positional binary form of appendClaims and the tag the first 16 bytes of
// HMAC-SHA256 over everything before the last dot, both in unpadded
// base64url. tokenPrefixV1 names the format issued before,
// "bo1.<key id>.<payload>.<signature>" with a compact JSON payload and the
// whole HMAC-SHA256: Verify accepts both until the last bo1 id has expired.
const (
	tokenPrefix   = "bo2"
	tokenPrefixV1 = "bo1"
)

// tagBytes is the length of a bo2 id's tag: HMAC-SHA256 truncated to 128
// bits. nonceBytes is that of its nonce.
const (
	tagBytes   = 16
	nonceBytes = 12
)

// tokenEncoding encodes the payload and signature of an option id. Decoding
// is strict: a base64url text whose unused low bits of the last character
// are not zero decodes to the same bytes as the canonical one, and would let
// one issued option have several ids (each verifying), so it is refused.
var tokenEncoding = base64.RawURLEncoding.Strict()

// MinKeyBytes is the least length of an option signing key.
const MinKeyBytes = 32

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// Key is one option signing key.
type Key struct {
	ID     string
	Secret []byte
}

// Keyring signs booking options with one key and verifies them with any of
// several, so keys can rotate: add the new key first (it signs), keep the
// old one after it (options it signed stay valid until they expire), and
// drop the old one once its options have expired. A nil *Keyring means
// signing is not configured: Sign and Verify then answer
// option_signing_not_configured (503).
type Keyring struct {
	signing Key
	verify  map[string][]byte
	random  io.Reader
	// cat gives the vertical and job type of a bo2 id's service.
	cat *catalog.Catalog
	// signers holds *signer values: keyed HMAC states of the signing key
	// with scratch buffers, reset between uses.
	signers sync.Pool
}

// NewKeyring returns a keyring signing with the first key and verifying
// with all of them. Key ids must be unique, 1 to 32 characters of
// [A-Za-z0-9_-]; secrets at least MinKeyBytes long.
func NewKeyring(keys ...Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("option signing: no key given")
	}
	cat, err := catalog.Load()
	if err != nil {
		return nil, fmt.Errorf("option signing: %w", err)
	}
	k := &Keyring{signing: keys[0], verify: make(map[string][]byte, len(keys)), random: rand.Reader, cat: cat}
	secret := bytes.Clone(keys[0].Secret)
	k.signers.New = func() any { return &signer{mac: hmac.New(sha256.New, secret)} }
	for _, key := range keys {
		if !keyIDPattern.MatchString(key.ID) {
			return nil, fmt.Errorf("option signing: key id %q must be 1 to 32 characters of A-Z, a-z, 0-9, '_' and '-'", key.ID)
		}
		if len(key.Secret) < MinKeyBytes {
			return nil, fmt.Errorf("option signing: key %s has %d bytes, want at least %d", key.ID, len(key.Secret), MinKeyBytes)
		}
		if _, dup := k.verify[key.ID]; dup {
			return nil, fmt.Errorf("option signing: key id %s is given twice", key.ID)
		}
		k.verify[key.ID] = bytes.Clone(key.Secret)
	}
	return k, nil
}

// ParseKeyring reads keys written as "kid1:base64key,kid0:base64key": the
// first signs, all verify. Keys may be in standard or URL-safe base64, with
// or without padding.
func ParseKeyring(spec string) (*Keyring, error) {
	var keys []Key
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, secret, ok := strings.Cut(part, ":")
		if !ok {
			return nil, errors.New(`option signing keys must be written as "kid:base64key,kid:base64key"`)
		}
		raw, err := decodeBase64(secret)
		if err != nil {
			return nil, fmt.Errorf("option signing: key %s is not base64", strings.TrimSpace(id))
		}
		keys = append(keys, Key{ID: strings.TrimSpace(id), Secret: raw})
	}
	return NewKeyring(keys...)
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		var b []byte
		if b, err = enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, err
}

// SigningKeyID returns the id of the key that signs, or "" for a nil keyring.
func (k *Keyring) SigningKeyID() string {
	if k == nil {
		return ""
	}
	return k.signing.ID
}

// Sign returns the booking_option_id of c in the current format (bo2): the
// claims with the signing key's id and, when c.Nonce is empty, 96 random
// bits. IssuedAt and ExpiresAt must be set; instants are kept to the
// millisecond. A given Nonce must be what Verify returned (12 bytes in
// unpadded base64url); VerticalID and JobTypeID must be those the catalog
// gives the service (empty for a service it does not know), PricingModel
// and PriceType values the catalog knows.
func (k *Keyring) Sign(c OptionClaims) (string, error) {
	if k == nil {
		return "", SigningNotConfigured()
	}
	if c.IssuedAt.IsZero() || c.ExpiresAt.IsZero() || !c.ExpiresAt.After(c.IssuedAt) {
		return "", errors.New("option signing: IssuedAt and ExpiresAt must be set, ExpiresAt after IssuedAt")
	}
	if v, j := k.jobOf(c.ServiceID); c.VerticalID != v || c.JobTypeID != j {
		return "", fmt.Errorf("option signing: service %q is of %q/%q in the catalog, not %q/%q", c.ServiceID, v, j, c.VerticalID, c.JobTypeID)
	}
	c.KeyID = k.signing.ID
	// Search signs every option it returns: the nonce, payload and token
	// are built in pooled buffers, and the id is the one allocation left.
	sg := k.signers.Get().(*signer)
	defer k.signers.Put(sg)
	if c.Nonce == "" {
		if _, err := io.ReadFull(k.random, sg.nonce[:]); err != nil {
			return "", fmt.Errorf("option signing: nonce: %w", err)
		}
	} else if n, err := tokenEncoding.DecodeString(c.Nonce); err != nil || len(n) != nonceBytes {
		return "", errors.New("option signing: a given nonce must be 12 bytes in unpadded base64url")
	} else {
		copy(sg.nonce[:], n)
	}
	var err error
	if sg.raw, err = appendClaims(sg.raw[:0], c, sg.nonce[:]); err != nil {
		return "", err
	}
	token := append(sg.token[:0], tokenPrefix...)
	token = append(token, '.')
	token = append(token, c.KeyID...)
	token = append(token, '.')
	token = tokenEncoding.AppendEncode(token, sg.raw)
	sg.mac.Reset()
	sg.mac.Write(token)
	tag := sg.mac.Sum(sg.sum[:0])[:tagBytes]
	token = append(token, '.')
	token = tokenEncoding.AppendEncode(token, tag)
	sg.token = token
	return string(token), nil
}

// signer is the scratch state of one Sign: the signing key's HMAC and
// buffers kept between uses.
type signer struct {
	mac        hash.Hash
	nonce      [nonceBytes]byte
	sum        [sha256.Size]byte
	raw, token []byte
}

// jobOf returns the vertical and job type whose fixed-price seed is the
// service, or "" and "" when the catalog does not know it.
func (k *Keyring) jobOf(serviceID string) (vertical, jobType string) {
	svc, ok := k.cat.Service(serviceID)
	if !ok {
		return "", ""
	}
	return svc.VerticalID, svc.JobTypeID
}

// pricingModels and priceTypes are the codes of a bo2 payload: a value's
// code is its index. Both lists only grow, at their ends, so an id keeps
// its meaning across releases.
var (
	pricingModels = [...]catalog.PricingModel{catalog.PricingFlat, catalog.PricingPerItem, catalog.PricingPerHour,
		catalog.PricingPerSqm, catalog.PricingPerWindow, catalog.PricingStartingPrice}
	priceTypes = [...]catalog.PriceType{catalog.PriceAvgFixed, catalog.PriceAvgUnit, catalog.PriceAvgRecurring,
		catalog.PriceStartingPrice}
)

// The flags of a bo2 payload name the optional claims it carries, in this
// order after the postcode; a claim not carried has its zero value (one for
// Quantity, the service's own version for TermsVersion). The claims of most
// options come first, so their flags fit one byte.
const (
	hasLocale = 1 << iota
	hasLabour
	hasTaxRules
	hasDestination
	hasUnitPrice
	hasQuantity
	hasUnit
	hasMinimum
	hasTerms
	knownFlags = hasTerms<<1 - 1
)

// appendClaims writes the bo2 payload of c with the nonce: positional, in
// this order, integers as (zigzag) varints, texts as a varint length and
// their bytes:
//
//	issued at (Unix ms), expiry − issued at (ms), nonce (12 bytes),
//	provider, service, slot start − issued at (ms), slot end − slot start (ms),
//	amount, pricing model code (1 byte), price type code (1 byte), flags,
//	postcode, then what the flags name: locale, labour percent (1 byte),
//	tax rules version, destination postcode, unit price, quantity
//	(IEEE 754 binary64, big-endian), unit, minimum charge, terms version.
//
// The vertical and job type are not written: the service's catalog entry
// names them. Every claim has one form, so Verify can demand that a payload
// is exactly what this function writes for the claims it reads.
func appendClaims(b []byte, c OptionClaims, nonce []byte) ([]byte, error) {
	pm := slices.Index(pricingModels[:], catalog.PricingModel(c.PricingModel))
	pt := slices.Index(priceTypes[:], catalog.PriceType(c.PriceType))
	if pm < 0 || pt < 0 {
		return b, fmt.Errorf("option signing: pricing model %q or price type %q has no code", c.PricingModel, c.PriceType)
	}
	if c.Labour.Stated && (c.Labour.Percent < 0 || c.Labour.Percent > 100) {
		return b, fmt.Errorf("option signing: labour share %d %% is not 0 to 100", c.Labour.Percent)
	}
	if math.IsNaN(c.Quantity) || math.IsInf(c.Quantity, 0) {
		return b, errors.New("option signing: quantity is not finite")
	}
	text := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	issued := c.IssuedAt.UnixMilli()
	b = binary.AppendVarint(b, issued)
	b = binary.AppendUvarint(b, uint64(c.ExpiresAt.UnixMilli()-issued))
	b = append(b, nonce...)
	text(c.ProviderID)
	text(c.ServiceID)
	start := c.SlotStart.UnixMilli()
	b = binary.AppendVarint(b, start-issued)
	b = binary.AppendUvarint(b, uint64(c.SlotEnd.UnixMilli()-start))
	b = binary.AppendVarint(b, c.AmountSEK)
	b = append(b, byte(pm), byte(pt))
	flags := optionalClaims(c)
	b = binary.AppendUvarint(b, flags)
	text(c.Postcode)
	if flags&hasLocale != 0 {
		text(c.Locale)
	}
	if flags&hasLabour != 0 {
		b = append(b, byte(c.Labour.Percent))
	}
	if flags&hasTaxRules != 0 {
		text(c.TaxRulesVersion)
	}
	if flags&hasDestination != 0 {
		text(c.DestinationPostcode)
	}
	if flags&hasUnitPrice != 0 {
		b = binary.AppendVarint(b, c.UnitPriceSEK)
	}
	if flags&hasQuantity != 0 {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(c.Quantity))
	}
	if flags&hasUnit != 0 {
		text(c.Unit)
	}
	if flags&hasMinimum != 0 {
		b = binary.AppendVarint(b, c.MinimumChargeSEK)
	}
	if flags&hasTerms != 0 {
		text(c.TermsVersion)
	}
	return b, nil
}

// optionalClaims returns the flags of the optional claims c carries.
func optionalClaims(c OptionClaims) uint64 {
	var f uint64
	set := func(flag uint64, carried bool) {
		if carried {
			f |= flag
		}
	}
	set(hasLocale, c.Locale != "")
	set(hasLabour, c.Labour.Stated)
	set(hasTaxRules, c.TaxRulesVersion != "")
	set(hasDestination, c.DestinationPostcode != "")
	set(hasUnitPrice, c.UnitPriceSEK != 0)
	// Bits, not ==: -0 is not 1 either, and must keep its sign.
	set(hasQuantity, math.Float64bits(c.Quantity) != math.Float64bits(1))
	set(hasUnit, c.Unit != "")
	set(hasMinimum, c.MinimumChargeSEK != 0)
	// Compared in parts: the joined version would be allocated.
	own, ok := strings.CutPrefix(c.TermsVersion, catalog.TermsVersionPrefix)
	set(hasTerms, !ok || own != c.ServiceID)
	return f
}

// claimsReader reads a bo2 payload; the first malformed read sets bad and
// every later one returns zero values.
type claimsReader struct {
	b   []byte
	bad bool
}

func (r *claimsReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *claimsReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *claimsReader) bytes(n uint64) []byte {
	if uint64(len(r.b)) < n {
		r.bad, r.b = true, nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *claimsReader) text() string { return string(r.bytes(r.uvarint())) }

func (r *claimsReader) code(n int) int {
	c := r.bytes(1)
	if r.bad || int(c[0]) >= n {
		r.bad = true
		return 0
	}
	return int(c[0])
}

// readClaims reads the claims of a bo2 payload and its nonce. It refuses
// (ok false) a payload that is not exactly what appendClaims writes for
// the claims read — overlong varints, flags of claims with their zero
// value, unknown flags or codes, bytes left over — and claims Sign would
// not issue.
func (k *Keyring) readClaims(raw []byte) (c OptionClaims, ok bool) {
	r := &claimsReader{b: raw}
	issued := r.varint()
	expires := issued + int64(r.uvarint())
	nonce := r.bytes(nonceBytes)
	c.ProviderID, c.ServiceID = r.text(), r.text()
	start := issued + r.varint()
	end := start + int64(r.uvarint())
	c.AmountSEK = r.varint()
	c.PricingModel = string(pricingModels[r.code(len(pricingModels))])
	c.PriceType = string(priceTypes[r.code(len(priceTypes))])
	flags := r.uvarint()
	c.Postcode = r.text()
	c.Quantity, c.TermsVersion = 1, catalog.TermsVersionPrefix+c.ServiceID
	if flags&hasLocale != 0 {
		c.Locale = r.text()
	}
	if flags&hasLabour != 0 {
		if p := r.code(101); !r.bad {
			c.Labour = bokat.StatedLabour(p)
		}
	}
	if flags&hasTaxRules != 0 {
		c.TaxRulesVersion = r.text()
	}
	if flags&hasDestination != 0 {
		c.DestinationPostcode = r.text()
	}
	if flags&hasUnitPrice != 0 {
		c.UnitPriceSEK = r.varint()
	}
	if flags&hasQuantity != 0 {
		if q := r.bytes(8); !r.bad {
			c.Quantity = math.Float64frombits(binary.BigEndian.Uint64(q))
		}
	}
	if flags&hasUnit != 0 {
		c.Unit = r.text()
	}
	if flags&hasMinimum != 0 {
		c.MinimumChargeSEK = r.varint()
	}
	if flags&hasTerms != 0 {
		c.TermsVersion = r.text()
	}
	if r.bad || len(r.b) != 0 || flags&^knownFlags != 0 || c.ProviderID == "" || c.ServiceID == "" ||
		expires <= issued || end <= start {
		return OptionClaims{}, false
	}
	c.IssuedAt, c.ExpiresAt = time.UnixMilli(issued).UTC(), time.UnixMilli(expires).UTC()
	c.SlotStart, c.SlotEnd = time.UnixMilli(start).UTC(), time.UnixMilli(end).UTC()
	c.Nonce = base64.RawURLEncoding.EncodeToString(nonce)
	c.VerticalID, c.JobTypeID = k.jobOf(c.ServiceID)
	again, err := appendClaims(make([]byte, 0, len(raw)), c, nonce)
	if err != nil || !bytes.Equal(again, raw) {
		return OptionClaims{}, false
	}
	return c, true
}

// Verify checks a booking_option_id, of either format, and returns its
// claims. It answers booking_option_invalid (400) for anything this service
// did not issue unchanged — malformed, altered, in another spelling of the
// same bytes, or signed with a key it does not hold — and
// booking_option_expired (409, option refresh required) once now has
// reached the option's expiry. Verify does not look at current supply; see
// Search.Revalidate. The vertical and job type of a bo2 id are those of its
// service in the catalog, empty when the catalog no longer has it (which
// revalidation refuses).
func (k *Keyring) Verify(token string, now time.Time) (OptionClaims, error) {
	if k == nil {
		return OptionClaims{}, SigningNotConfigured()
	}
	parts := strings.Split(token, ".")
	if len(parts) != 4 || parts[0] != tokenPrefix && parts[0] != tokenPrefixV1 {
		return OptionClaims{}, optionInvalid("it is not in the format this service issues")
	}
	secret, ok := k.verify[parts[1]]
	if !ok {
		return OptionClaims{}, optionInvalid("its signing key is not known to this service (it may have been retired)")
	}
	sig, err := tokenEncoding.DecodeString(parts[3])
	if err != nil {
		return OptionClaims{}, optionInvalid("its signature is malformed")
	}
	want := mac(secret, token[:len(token)-len(parts[3])-1])
	if parts[0] == tokenPrefix {
		want = want[:tagBytes]
	}
	if subtle.ConstantTimeCompare(sig, want) != 1 {
		return OptionClaims{}, optionInvalid("its signature does not match its content")
	}
	raw, err := tokenEncoding.DecodeString(parts[2])
	if err != nil {
		return OptionClaims{}, optionInvalid("its content is malformed")
	}
	var c OptionClaims
	if parts[0] == tokenPrefix {
		c, ok = k.readClaims(raw)
	} else {
		c, ok = readClaimsV1(raw, parts[1])
	}
	if !ok {
		return OptionClaims{}, optionInvalid("its content is malformed")
	}
	c.KeyID = parts[1]
	if !now.Before(c.ExpiresAt) {
		return c, &bokat.Error{
			Code:                  bokat.CodeBookingOptionExpired,
			Detail:                fmt.Sprintf("The booking option expired at %s.", c.ExpiresAt.Format(time.RFC3339)),
			OptionRefreshRequired: true,
			SafeNextStep:          safeNextStepRefresh,
		}
	}
	return c, nil
}

func mac(key []byte, signed string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// safeNextStepRefresh is the recovery of every error that needs a fresh search.
const safeNextStepRefresh = "Nothing was booked. Search booking options again (POST /v1/booking-options), show the user the fresh options, and confirm only after the user's new explicit choice."

func optionInvalid(why string) *bokat.Error {
	return &bokat.Error{
		Code:         bokat.CodeBookingOptionInvalid,
		Detail:       "The booking_option_id was not issued by this service unchanged: " + why + ".",
		SafeNextStep: "Pass booking_option_id exactly as a search returned it. Nothing was booked; search again and let the user choose.",
	}
}

// SigningNotConfigured is the error of search and confirmation when the
// operator has configured no option signing key (production only).
func SigningNotConfigured() *bokat.Error {
	return &bokat.Error{
		Code:         bokat.CodeOptionSigningNotConfigured,
		Detail:       "Booking options cannot be issued or confirmed: the operator has not configured option signing keys.",
		RetryAfter:   60 * time.Second,
		SafeNextStep: "Direct booking is unavailable right now. Offer the user a provider follow-up request (POST /v1/requests) after they consent, or try again later.",
	}
}

// DerivedKey returns a 32-byte key for another purpose, derived with
// HKDF-SHA-256 (info label) from the secret of the key named id, or of
// the signing key when id is empty, and that key's id: the purpose's keys
// rotate with the option signing keys. It fails for an unknown id and a
// nil keyring.
func (k *Keyring) DerivedKey(id, label string) (string, []byte, error) {
	if k == nil {
		return "", nil, errors.New("option signing: not configured")
	}
	if id == "" {
		id = k.signing.ID
	}
	secret, ok := k.verify[id]
	if !ok {
		return "", nil, fmt.Errorf("option signing: unknown key id %q", id)
	}
	key, err := hkdf.Key(sha256.New, secret, nil, label, 32)
	return id, key, err
}

// DerivedKey is the keyring's DerivedKey; it answers 503
// option_signing_not_configured when there is no keyring.
func (l *Lifecycle) DerivedKey(id, label string) (string, []byte, error) {
	if l.keys == nil {
		return "", nil, SigningNotConfigured()
	}
	return l.keys.DerivedKey(id, label)
}
