package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// Migration 00027 gives the blocked periods an import stored before it the
// ids an import derives now (the provider's id leading), so importing the
// same file again finds them unchanged; a block the provider added on its
// pages keeps its id, and going down restores the earlier form.
func TestBlockedPeriodIDsTakeTheProviderLedForm(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		start := sqlstoretest.T0.Add(48 * time.Hour)
		end := start.Add(4 * time.Hour)
		p := bokat.ProviderSupply{
			Provider: bokat.Provider{ID: "prv_1", Name: "Rör AB", Email: "bokningar@ror.example", Active: true, HorizonDays: 14},
			Blocked:  []bokat.BlockedPeriod{{ID: supply.BlockedPeriodID("prv_1", start, end), Start: start, End: end, Note: "Kurs"}},
		}
		id := p.Blocked[0].ID
		old := "blk_" + strings.TrimPrefix(id, "blk_prv_1_")
		if len(old) != 24 || old == id {
			t.Fatalf("derived id %q: its earlier form %q is not 24 characters", id, old)
		}
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.PutProviderSupply(ctx, p, sqlstoretest.T0)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// A block of the provider's pages (block_id set), with an id of the
		// earlier form's length, is not the import's.
		pageBlock := "blk_0123456789abcdef0123"
		if err := db.Exec(ctx, `INSERT INTO provider_blocks (id, provider_id, whole_days, weeks, start_at, end_at, note, created_by, created_at)
			VALUES ('pb_1', 'prv_1', FALSE, 1, $1, $2, '', 'usr_1', 0)`, sqlstore.Millis(end), sqlstore.Millis(end.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(ctx, `INSERT INTO calendar_entries (id, provider_id, kind, start_at, end_at, active, note, created_at, block_id)
			VALUES ($1, 'prv_1', 'blocked', $2, $3, TRUE, '', 0, 'pb_1')`, pageBlock, sqlstore.Millis(end), sqlstore.Millis(end.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}

		if err := db.MigrateDownTo(ctx, 26); err != nil {
			t.Fatalf("down to 26: %v", err)
		}
		if got := entryIDs(t, db); got != old+","+pageBlock {
			t.Fatalf("ids before 00027 = %s, want %s,%s", got, old, pageBlock)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("up to 27: %v", err)
		}
		if got := entryIDs(t, db); got != id+","+pageBlock {
			t.Fatalf("ids after 00027 = %s, want %s,%s", got, id, pageBlock)
		}
		// The page's block aside (an import keeps it when the provider manages
		// its blocks), the file's period is what the store holds.
		if err := db.Exec(ctx, `DELETE FROM calendar_entries WHERE block_id = 'pb_1'`); err != nil {
			t.Fatal(err)
		}
		var outcome supply.Outcome
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			var err error
			outcome, err = tx.PutProviderSupply(ctx, p, sqlstoretest.T0.Add(time.Hour))
			return err
		}); err != nil || outcome != supply.Unchanged {
			t.Fatalf("the same supply again after 00027: %v, %v; want unchanged", outcome, err)
		}
	})
}

// entryIDs is the ids of the blocked calendar entries, by start, joined.
func entryIDs(t *testing.T, db *sqlstore.DB) string {
	t.Helper()
	ids, err := db.Strings(context.Background(), `SELECT id FROM calendar_entries WHERE kind = 'blocked' ORDER BY start_at`)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(ids, ",")
}
