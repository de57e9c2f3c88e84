package supply

import "strconv"

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
