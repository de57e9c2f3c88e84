package supply

import (
	"bytes"
	"errors"
	"strconv"

	"bokat/internal/catalog"
)

// Limits of the file format, for the external tests.
var (
	ProviderIDPattern = providerIDPattern
	MaxHorizonDays    = schemaLimit("/$defs/provider/properties/horizon_days/maximum")
	MaxPriceSEK       = int64(schemaLimit("/$defs/price/maximum"))
)

const (
	MaxEmailLen = maxEmailLen
	MaxPhoneLen = maxPhoneLen
)

// schemaLimit reads a number of the file's schema.
func schemaLimit(ptr string) int {
	_, doc := fileSchema()
	n, err := strconv.Atoi(lookup(doc, ptr).Value)
	if err != nil {
		panic(err)
	}
	return n
}

// ParseWhole is Parse reading the file's whole node tree at once.
var ParseWhole = parseWhole

// ReadsInParts reports whether Parse reads the file provider by provider.
func ReadsInParts(data []byte, cat *catalog.Catalog) bool {
	return !errors.Is(scan("x.yaml", bytes.NewReader(data), cat, nil), errWhole)
}
