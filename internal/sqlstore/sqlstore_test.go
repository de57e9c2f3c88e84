package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

func TestMigrateIsCurrentAndIdempotent(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("second Migrate: %v", err)
		}
		current, latest, err := db.SchemaVersions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if current != latest || latest < 1 {
			t.Fatalf("schema version = %d, want latest %d (>= 1)", current, latest)
		}
		if err := db.CheckSchema(ctx, false); err != nil {
			t.Fatalf("CheckSchema: %v", err)
		}
	})
}

func TestSchemaNewerThanBinaryIsRefused(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		_, latest, err := db.SchemaVersions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.Q().ExecContext(ctx,
				`INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, latest+1)
			return err
		})
		if err != nil {
			t.Fatalf("fake a newer schema: %v", err)
		}
		if err := db.Migrate(ctx); !errors.Is(err, sqlstore.ErrSchemaTooNew) {
			t.Fatalf("Migrate on a newer schema = %v, want ErrSchemaTooNew", err)
		}
	})
}

func TestPartnerClientRoundTrip(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		want := auth.PartnerClient{
			ID: "pc_1", Name: "Acme", Scopes: []bokat.Scope{bokat.ScopeBookingsSearch, bokat.ScopeBookingsConfirm},
			CreatedAt: time.UnixMilli(1_790_000_000_000).UTC(),
		}
		if err := db.CreatePartnerClient(ctx, want, "hash-1"); err != nil {
			t.Fatal(err)
		}
		got, err := db.PartnerClientByTokenHash(ctx, "hash-1", want.CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != want.ID || got.Name != want.Name || len(got.Scopes) != 2 || got.Scopes[1] != bokat.ScopeBookingsConfirm || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		if _, err := db.PartnerClientByTokenHash(ctx, "other", want.CreatedAt); !errors.Is(err, bokat.ErrNotFound) {
			t.Fatalf("unknown hash: err = %v, want ErrNotFound", err)
		}
		if err := db.CreatePartnerClient(ctx, auth.PartnerClient{ID: "pc_2", Name: "B", Scopes: want.Scopes, CreatedAt: want.CreatedAt}, "hash-1"); !errors.Is(err, bokat.ErrConflict) {
			t.Fatalf("duplicate hash: err = %v, want ErrConflict", err)
		}
	})
}

func TestIdempotencyRecordIsWrittenWithTheTransaction(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		rec := sqlstore.IdempotencyRecord{OwnerKey: "c1", Operation: "confirm", Key: "k1", Fingerprint: "f",
			ResourceID: "b1", ResponseBody: []byte(`{"ok":true}`), CreatedAt: time.Now()}
		boom := errors.New("boom")
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			if err := tx.PutIdempotencyRecord(ctx, rec); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx = %v, want boom", err)
		}
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.IdempotencyRecord(ctx, "c1", "confirm", "k1")
			return err
		})
		if !errors.Is(err, bokat.ErrNotFound) {
			t.Fatalf("rolled-back record: err = %v, want ErrNotFound", err)
		}
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.PutIdempotencyRecord(ctx, rec) })
		if err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.PutIdempotencyRecord(ctx, rec) })
		if !errors.Is(err, bokat.ErrConflict) {
			t.Fatalf("same key twice: err = %v, want ErrConflict", err)
		}
		var got sqlstore.IdempotencyRecord
		err = db.InTx(ctx, func(tx *sqlstore.Tx) (err error) {
			got, err = tx.IdempotencyRecord(ctx, "c1", "confirm", "k1")
			return err
		})
		if err != nil || string(got.ResponseBody) != `{"ok":true}` || !got.ExpiresAt.IsZero() {
			t.Fatalf("got %+v, %v", got, err)
		}
	})
}

func TestClosedStoreIsUnavailable(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		db.Close()
		err := db.Ping(context.Background())
		if !errors.Is(err, bokat.ErrUnavailable) {
			t.Fatalf("Ping on a closed store = %v, want ErrUnavailable", err)
		}
	})
}

func TestUnreachableDatabaseFailsOpen(t *testing.T) {
	t.Parallel()
	_, err := sqlstore.Open(context.Background(), "postgres://bokat@127.0.0.1:1/none?connect_timeout=2")
	if err == nil {
		t.Fatal("Open of an unreachable server succeeded")
	}
	if _, err := sqlstore.Open(context.Background(), "mysql://x"); err == nil {
		t.Fatal("Open of an unsupported URL succeeded")
	}
}
