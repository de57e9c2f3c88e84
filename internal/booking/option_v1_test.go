package booking

import (
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"testing"

	"bokat/internal/catalog"
)

// signV1 returns the bo1 id of c, as the releases before bo2 issued it: a
// 128-bit nonce unless c.Nonce is given, the whole HMAC-SHA256.
func (k *Keyring) signV1(tb testing.TB, c OptionClaims) string {
	tb.Helper()
	if c.Nonce == "" {
		c.Nonce = base64.RawURLEncoding.EncodeToString([]byte(rand.Text())[:16])
	}
	signed := tokenPrefixV1 + "." + k.signing.ID + "." + tokenEncoding.EncodeToString(appendPayloadV1(nil, c))
	return signed + "." + tokenEncoding.EncodeToString(mac(k.verify[k.signing.ID], signed))
}

// appendPayloadV1 writes the bo1 payload of c as compact JSON, in the
// member order of payloadV1, as the releases before bo2 did.
func appendPayloadV1(b []byte, c OptionClaims) []byte {
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
