package supply

import (
	"context"
	"io"
	"strconv"
	"time"

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

// ParseTellingParts is Parse, also telling whether it read the file
// provider by provider (inParts) or as one node tree: one reading answers
// both.
var ParseTellingParts = parse

// ImportStreamInBatches is ImportStream storing size providers at a time
// (ImportStream: ImportBatch), so that a test crosses batches with a file
// of a few providers.
func ImportStreamInBatches(ctx context.Context, st Store, cat *catalog.Catalog, name string, open func() (io.ReadCloser, error),
	now time.Time, ready func(*File) error, size int) (*File, Result, error) {
	return importStream(ctx, st, cat, name, open, now, ready, size)
}

const (
	ImportBatch = importBatch
	// PartsAhead bounds the providers a scan reads ahead of the one taken.
	PartsAhead = partsAhead
)
