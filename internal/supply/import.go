package supply

import (
	"context"
	"fmt"
	"time"

	"bokat"
	"bokat/internal/catalog"
)

// Result says what an import did, by provider id.
type Result struct {
	Created, Updated, Unchanged []string
}

// Changed reports whether the import wrote anything.
func (r Result) Changed() bool { return len(r.Created)+len(r.Updated) > 0 }

// String summarizes r: "16 providers: 2 created, 1 updated, 13 unchanged".
func (r Result) String() string {
	n := len(r.Created) + len(r.Updated) + len(r.Unchanged)
	return fmt.Sprintf("%d providers: %d created, %d updated, %d unchanged", n, len(r.Created), len(r.Updated), len(r.Unchanged))
}

// Import parses and validates a supply file and stores it in one
// transaction: each provider of the file, with its postcodes, services,
// hours and blocked periods, replaces what the store holds for that provider
// id. Providers the file does not name are left as they are (set
// `active: false` to withdraw one). Nothing is written when the file has any
// problem; the error is then *Errors. Importing the same file twice changes
// nothing the second time.
func Import(ctx context.Context, st Store, cat *catalog.Catalog, name string, data []byte, now time.Time) (Result, error) {
	providers, err := Parse(name, data, cat)
	if err != nil {
		return Result{}, err
	}
	return ImportParsed(ctx, st, name, providers, now)
}

// ImportParsed is Import of providers already parsed (by Parse) from the
// file name.
func ImportParsed(ctx context.Context, st Store, name string, providers []bokat.ProviderSupply, now time.Time) (Result, error) {
	var res Result
	err := st.InTx(ctx, func(tx Tx) error {
		res = Result{}
		outcomes, err := tx.PutSupply(ctx, providers, now)
		if err != nil {
			return fmt.Errorf("store the providers: %w", err)
		}
		for i, outcome := range outcomes {
			id := providers[i].ID
			switch outcome {
			case Created:
				res.Created = append(res.Created, id)
			case Updated:
				res.Updated = append(res.Updated, id)
			default:
				res.Unchanged = append(res.Unchanged, id)
			}
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("import %s: %w", name, err)
	}
	return res, nil
}
