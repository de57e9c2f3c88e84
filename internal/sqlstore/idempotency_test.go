package sqlstore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

func TestInIdempotentTxRunsOnceAndReplays(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		k := sqlstore.IdemKey{Owner: "c1", Operation: "op", Key: "k"}
		var runs atomic.Int32
		fn := func(tx *sqlstore.Tx) (sqlstore.Outcome, error) {
			n := runs.Add(1)
			time.Sleep(20 * time.Millisecond) // widen the race window
			_, err := tx.Q().ExecContext(ctx, `INSERT INTO server_secrets (name, value, created_at) VALUES ($1, 'x', 0)`,
				"effect-"+string(rune('a'+n)))
			return sqlstore.Outcome{Status: 201, Body: []byte(`{"n":1}`), ResourceID: "r1"}, err
		}
		var wg sync.WaitGroup
		var replays atomic.Int32
		errs := make(chan error, 20)
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, replay, err := db.InIdempotentTx(ctx, k, "fp", time.Now(), time.Time{}, fn)
				if err != nil {
					errs <- err
					return
				}
				if out.ResourceID != "r1" || out.Status != 201 || string(out.Body) != `{"n":1}` {
					errs <- errors.New("outcome differs: " + string(out.Body))
				}
				if replay {
					replays.Add(1)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent same-key call: %v", err)
		}
		if runs.Load() != 1 || replays.Load() != 19 {
			t.Fatalf("effect ran %d times with %d replays, want 1 and 19", runs.Load(), replays.Load())
		}
		_, _, err := db.InIdempotentTx(ctx, k, "other", time.Now(), time.Time{}, fn)
		if bokat.ErrorCode(err) != bokat.CodeIdempotencyKeyReused {
			t.Fatalf("different fingerprint: %v, want idempotency_key_reused", err)
		}
		if runs.Load() != 1 {
			t.Fatal("the effect ran for a reused key")
		}
	})
}

func TestInIdempotentTxLeavesNoKeyWhenTheWriteFails(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		k := sqlstore.IdemKey{Owner: "c1", Operation: "op", Key: "k"}
		boom := bokat.Errorf(bokat.CodeBookingOptionUnavailable, "taken")
		_, _, err := db.InIdempotentTx(ctx, k, "fp", time.Now(), time.Time{}, func(tx *sqlstore.Tx) (sqlstore.Outcome, error) {
			return sqlstore.Outcome{}, boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
		out, replay, err := db.InIdempotentTx(ctx, k, "fp", time.Now(), time.Time{}, func(tx *sqlstore.Tx) (sqlstore.Outcome, error) {
			return sqlstore.Outcome{Status: 201, Body: []byte(`{}`), ResourceID: "r2"}, nil
		})
		if err != nil || replay || out.ResourceID != "r2" {
			t.Fatalf("retry after a failed write: %+v replay=%v err=%v", out, replay, err)
		}
	})
}
