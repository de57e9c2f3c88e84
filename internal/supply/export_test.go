package supply

// Limits of the file format, for the external tests.
var ProviderIDPattern = providerIDPattern

const (
	MaxEmailLen    = maxEmailLen
	MaxPhoneLen    = maxPhoneLen
	MaxHorizonDays = maxHorizonDays
	MaxPriceSEK    = maxPriceSEK
)
