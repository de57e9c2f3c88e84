package booking

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"regexp"
	"strconv"
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

// tokenPrefix starts every booking_option_id and names its format: version
// 1, "bo1.<key id>.<payload>.<signature>", the payload being compact JSON in
// unpadded base64url and the signature HMAC-SHA256 over everything before
// the last dot.
const tokenPrefix = "bo1"

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
	k := &Keyring{signing: keys[0], verify: make(map[string][]byte, len(keys)), random: rand.Reader}
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

// payload is the signed form of OptionClaims: short names keep the token
// compact; instants are Unix milliseconds.
type payload struct {
	// KeyID repeats the id's key part; ids issued now leave it out.
	KeyID        string  `json:"k,omitempty"`
	IssuedAt     int64   `json:"iat"`
	ExpiresAt    int64   `json:"exp"`
	Nonce        string  `json:"n"`
	Provider     string  `json:"p"`
	Service      string  `json:"s"`
	Vertical     string  `json:"v"`
	JobType      string  `json:"j"`
	SlotStart    int64   `json:"ss"`
	SlotEnd      int64   `json:"se"`
	Amount       int64   `json:"a"`
	PricingModel string  `json:"pm"`
	PriceType    string  `json:"pt"`
	UnitPrice    int64   `json:"up,omitempty"`
	Quantity     float64 `json:"q"`
	Unit         string  `json:"u,omitempty"`
	Minimum      int64   `json:"min,omitempty"`
	// Terms is absent when it is the service's own version
	// (catalog.TermsVersionPrefix + the service id), as for every option
	// issued now; ids issued before carry it.
	Terms       *string `json:"t,omitempty"`
	Postcode    string  `json:"pc"`
	Destination string  `json:"dpc,omitempty"`
	Locale      string  `json:"l,omitempty"`
	Labour      *int    `json:"lp,omitempty"`
	TaxRules    string  `json:"tv,omitempty"`
}

// Sign returns the booking_option_id of c: the claims with the signing
// key's id and, when c.Nonce is empty, 128 random bits. IssuedAt and
// ExpiresAt must be set.
func (k *Keyring) Sign(c OptionClaims) (string, error) {
	if k == nil {
		return "", SigningNotConfigured()
	}
	if c.IssuedAt.IsZero() || c.ExpiresAt.IsZero() || !c.ExpiresAt.After(c.IssuedAt) {
		return "", errors.New("option signing: IssuedAt and ExpiresAt must be set, ExpiresAt after IssuedAt")
	}
	c.KeyID = k.signing.ID
	// Search signs every option it returns: the nonce, payload and token
	// are built in pooled buffers, and the id is the one allocation left.
	sg := k.signers.Get().(*signer)
	defer k.signers.Put(sg)
	if c.Nonce == "" {
		// Random bits are read for several nonces at a time (a search
		// signs several options); each byte is used once.
		if sg.unused < nonceSize {
			if _, err := io.ReadFull(k.random, sg.entropy[:]); err != nil {
				return "", fmt.Errorf("option signing: nonce: %w", err)
			}
			sg.unused = len(sg.entropy)
		}
		at := len(sg.entropy) - sg.unused
		sg.unused -= nonceSize
		c.Nonce = base64.RawURLEncoding.EncodeToString(sg.entropy[at : at+nonceSize])
	}
	sg.raw = appendPayload(sg.raw[:0], c)
	token := append(sg.token[:0], tokenPrefix...)
	token = append(token, '.')
	token = append(token, c.KeyID...)
	token = append(token, '.')
	token = tokenEncoding.AppendEncode(token, sg.raw)
	sg.mac.Reset()
	sg.mac.Write(token)
	sig := sg.mac.Sum(sg.sum[:0])
	token = append(token, '.')
	token = tokenEncoding.AppendEncode(token, sig)
	sg.token = token
	return string(token), nil
}

// signer is the scratch state of one Sign: the signing key's HMAC and
// buffers kept between uses.
type signer struct {
	mac hash.Hash
	// entropy holds random bits for the nonces of the next signatures, of
	// which the last unused bytes are still to be used.
	entropy    [8 * nonceSize]byte
	unused     int
	sum        [sha256.Size]byte
	raw, token []byte
}

// nonceSize is the length of an option's nonce: 128 random bits.
const nonceSize = 16

// appendPayload writes the payload of c as compact JSON, in the member
// order of the payload type, without reflection: search signs every option
// it returns.
func appendPayload(b []byte, c OptionClaims) []byte {
	str := func(name, v string) {
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = appendJSONString(b, v)
		b = append(b, ',')
	}
	num := func(name string, v int64) {
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ',')
	}
	b = append(b, '{')
	// The key id is the token's second part; the payload does not repeat it.
	num("iat", c.IssuedAt.UnixMilli())
	num("exp", c.ExpiresAt.UnixMilli())
	str("n", c.Nonce)
	str("p", c.ProviderID)
	str("s", c.ServiceID)
	str("v", c.VerticalID)
	str("j", c.JobTypeID)
	num("ss", c.SlotStart.UnixMilli())
	num("se", c.SlotEnd.UnixMilli())
	num("a", c.AmountSEK)
	str("pm", c.PricingModel)
	str("pt", c.PriceType)
	// The per-unit facts and the destination are left out when zero, as
	// for most options (the ids are most of a model's compact text).
	if c.UnitPriceSEK != 0 {
		num("up", c.UnitPriceSEK)
	}
	b = append(b, `"q":`...)
	b = strconv.AppendFloat(b, c.Quantity, 'g', -1, 64)
	b = append(b, ',')
	if c.Unit != "" {
		str("u", c.Unit)
	}
	if c.MinimumChargeSEK != 0 {
		num("min", c.MinimumChargeSEK)
	}
	if c.TermsVersion != catalog.TermsVersionPrefix+c.ServiceID {
		str("t", c.TermsVersion)
	}
	str("pc", c.Postcode)
	if c.DestinationPostcode != "" {
		str("dpc", c.DestinationPostcode)
	}
	if c.Locale != "" {
		str("l", c.Locale)
	}
	if c.Labour.Stated {
		num("lp", int64(c.Labour.Percent))
	}
	if c.TaxRulesVersion != "" {
		str("tv", c.TaxRulesVersion)
	}
	b[len(b)-1] = '}'
	return b
}

// appendJSONString writes s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

func mac(key []byte, signed string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// Verify checks a booking_option_id and returns its claims. It answers
// booking_option_invalid (400) for anything this service did not issue
// unchanged — malformed, altered, or signed with a key it does not hold —
// and booking_option_expired (409, option refresh required) once now has
// reached the option's expiry. Verify does not look at current supply; see
// Search.Revalidate.
func (k *Keyring) Verify(token string, now time.Time) (OptionClaims, error) {
	if k == nil {
		return OptionClaims{}, SigningNotConfigured()
	}
	parts := strings.Split(token, ".")
	if len(parts) != 4 || parts[0] != tokenPrefix {
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
	signed := token[:len(token)-len(parts[3])-1]
	if subtle.ConstantTimeCompare(sig, mac(secret, signed)) != 1 {
		return OptionClaims{}, optionInvalid("its signature does not match its content")
	}
	raw, err := tokenEncoding.DecodeString(parts[2])
	if err != nil {
		return OptionClaims{}, optionInvalid("its content is malformed")
	}
	var p payload
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if p.KeyID == "" {
		p.KeyID = parts[1]
	}
	if err := dec.Decode(&p); err != nil || p.KeyID != parts[1] || p.Provider == "" || p.Service == "" ||
		p.ExpiresAt <= p.IssuedAt || p.SlotEnd <= p.SlotStart || p.Labour != nil && (*p.Labour < 0 || *p.Labour > 100) {
		return OptionClaims{}, optionInvalid("its content is malformed")
	}
	c := OptionClaims{
		KeyID: p.KeyID, IssuedAt: time.UnixMilli(p.IssuedAt).UTC(), ExpiresAt: time.UnixMilli(p.ExpiresAt).UTC(), Nonce: p.Nonce,
		ProviderID: p.Provider, ServiceID: p.Service, VerticalID: p.Vertical, JobTypeID: p.JobType,
		SlotStart: time.UnixMilli(p.SlotStart).UTC(), SlotEnd: time.UnixMilli(p.SlotEnd).UTC(),
		AmountSEK: p.Amount, PricingModel: p.PricingModel, PriceType: p.PriceType, UnitPriceSEK: p.UnitPrice,
		Quantity: p.Quantity, Unit: p.Unit, MinimumChargeSEK: p.Minimum,
		TermsVersion: catalog.TermsVersionPrefix + p.Service, Postcode: p.Postcode, DestinationPostcode: p.Destination, Locale: p.Locale,
		TaxRulesVersion: p.TaxRules,
	}
	if p.Terms != nil {
		c.TermsVersion = *p.Terms
	}
	if p.Labour != nil {
		c.Labour = bokat.StatedLabour(*p.Labour)
	}
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
