package booking

import (
	"bytes"
	"encoding/json"
	"time"

	"bokat"
	"bokat/internal/catalog"
)

// payloadV1 is the payload of a bo1 id: the claims as compact JSON with
// short names, instants in Unix milliseconds. No id of this form is issued
// any more; Verify reads those issued before until they expire.
type payloadV1 struct {
	// KeyID repeats the id's key part; the last ids issued leave it out.
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
	// (catalog.TermsVersionPrefix + the service id).
	Terms       *string `json:"t,omitempty"`
	Postcode    string  `json:"pc"`
	Destination string  `json:"dpc,omitempty"`
	Locale      string  `json:"l,omitempty"`
	Labour      *int    `json:"lp,omitempty"`
	TaxRules    string  `json:"tv,omitempty"`
}

// readClaimsV1 reads the claims of a bo1 payload signed with the key
// keyID; ok is false for a payload that is not one.
func readClaimsV1(raw []byte, keyID string) (OptionClaims, bool) {
	p := payloadV1{KeyID: keyID}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || p.KeyID != keyID || p.Provider == "" || p.Service == "" ||
		p.ExpiresAt <= p.IssuedAt || p.SlotEnd <= p.SlotStart || p.Labour != nil && (*p.Labour < 0 || *p.Labour > 100) {
		return OptionClaims{}, false
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
	return c, true
}
