package sqlstore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bokat"
	"bokat/internal/idem"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

func TestInIdempotentTxRunsOnceAndReplays(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		k := idem.Key{Owner: "c1", Operation: "op", Key: "k"}
		var runs atomic.Int32
		fn := func(tx *sqlstore.Tx) (idem.Outcome, error) {
			n := runs.Add(1)
			time.Sleep(20 * time.Millisecond) // widen the race window
			_, err := tx.Q().ExecContext(ctx, `INSERT INTO server_secrets (name, value, created_at) VALUES ($1, 'x', 0)`,
				"effect-"+string(rune('a'+n)))
			return idem.Outcome{Body: []byte(`{"n":1}`), ResourceID: "r1"}, err
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
				if out.ResourceID != "r1" || string(out.Body) != `{"n":1}` {
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
		k := idem.Key{Owner: "c1", Operation: "op", Key: "k"}
		boom := bokat.Errorf(bokat.CodeBookingOptionUnavailable, "taken")
		_, _, err := db.InIdempotentTx(ctx, k, "fp", time.Now(), time.Time{}, func(tx *sqlstore.Tx) (idem.Outcome, error) {
			return idem.Outcome{}, boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
		out, replay, err := db.InIdempotentTx(ctx, k, "fp", time.Now(), time.Time{}, func(tx *sqlstore.Tx) (idem.Outcome, error) {
			return idem.Outcome{Body: []byte(`{}`), ResourceID: "r2"}, nil
		})
		if err != nil || replay || out.ResourceID != "r2" {
			t.Fatalf("retry after a failed write: %+v replay=%v err=%v", out, replay, err)
		}
	})
}

// Migration 00013 drops the stored status; rolled back, it gives each
// record the status its operation answered.
func TestIdempotencyStatusMigration(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		put := func(op string) {
			t.Helper()
			_, _, err := db.InIdempotentTx(ctx, idem.Key{Owner: "c1", Operation: op, Key: "k"}, "fp", t0, time.Time{},
				func(*sqlstore.Tx) (idem.Outcome, error) {
					return idem.Outcome{Body: []byte(`{"op":"` + op + `"}`), ResourceID: "r"}, nil
				})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, op := range []string{"bookings.confirm", "bookings.cancel", "bookings.reschedule", "requests.create"} {
			put(op)
		}
		if err := db.MigrateDownTo(ctx, 12); err != nil {
			t.Fatalf("down to 12: %v", err)
		}
		for op, want := range map[string]int{"bookings.confirm": 201, "bookings.cancel": 200, "bookings.reschedule": 200, "requests.create": 201} {
			var got int
			err := db.R().QueryRowContext(ctx, `SELECT response_status FROM idempotency_keys WHERE operation = $1`, op).Scan(&got)
			if err != nil || got != want {
				t.Errorf("%s at 00012: status %d (%v), want %d", op, got, err, want)
			}
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("up again: %v", err)
		}
		out, replay, err := db.InIdempotentTx(ctx, idem.Key{Owner: "c1", Operation: "bookings.cancel", Key: "k"}, "fp", t0, time.Time{},
			func(*sqlstore.Tx) (idem.Outcome, error) { return idem.Outcome{}, errors.New("ran again") })
		if err != nil || !replay || string(out.Body) != `{"op":"bookings.cancel"}` || out.ResourceID != "r" {
			t.Fatalf("replay after 00013: %+v replay=%v err=%v", out, replay, err)
		}
	})
}
