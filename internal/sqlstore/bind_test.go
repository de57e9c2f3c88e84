package sqlstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"bokat/internal/idem"
)

type boundTx interface{ Engine() Engine }

type notImplemented interface{ NoSuchMethod() }

func TestBindHandsTheConsumersTxAndRollsBackOnError(t *testing.T) {
	db, err := Open(context.Background(), "sqlite://"+t.TempDir()+"/bind.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := Bind[boundTx](db)
	var seen Engine
	if err := b.InTx(context.Background(), func(tx boundTx) error { seen = tx.Engine(); return nil }); err != nil {
		t.Fatal(err)
	}
	if seen != db.Engine() {
		t.Fatalf("tx engine %q, want %q", seen, db.Engine())
	}
	boom := errors.New("boom")
	if err := b.InTx(context.Background(), func(boundTx) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("InTx error = %v, want %v", err, boom)
	}
}

func TestBindRefusesATxInterfaceTxDoesNotImplement(t *testing.T) {
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(p.(string), "NoSuchMethod") && !strings.Contains(p.(string), "notImplemented") {
			t.Fatalf("Bind with an unimplemented interface: panic %v, want one naming the interface", p)
		}
	}()
	Bind[notImplemented](&DB{})
}

func TestBoundInIdempotentTxHandsTheConsumersTxAndReplays(t *testing.T) {
	db, err := Open(context.Background(), "sqlite://"+t.TempDir()+"/bind.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := Bind[boundTx](db)
	k := idem.Key{Owner: "c1", Operation: "op", Key: "k"}
	runs := 0
	fn := func(tx boundTx) (idem.Outcome, error) {
		runs++
		if tx.Engine() != db.Engine() {
			t.Errorf("tx engine %q, want %q", tx.Engine(), db.Engine())
		}
		return idem.Outcome{Body: []byte(`{"n":1}`), ResourceID: "r1"}, nil
	}
	now := time.Now()
	for i, wantReplay := range []bool{false, true} {
		out, replay, err := b.InIdempotentTx(context.Background(), k, "fp", now, time.Time{}, fn)
		if err != nil || replay != wantReplay || string(out.Body) != `{"n":1}` || out.ResourceID != "r1" {
			t.Fatalf("call %d: %+v replay=%v err=%v, want replay %v", i, out, replay, err, wantReplay)
		}
	}
	if runs != 1 {
		t.Fatalf("fn ran %d times, want once", runs)
	}
	boom := errors.New("boom")
	_, _, err = b.InIdempotentTx(context.Background(), idem.Key{Owner: "c1", Operation: "op", Key: "k2"}, "fp", now, time.Time{},
		func(boundTx) (idem.Outcome, error) { return idem.Outcome{}, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("InIdempotentTx error = %v, want %v", err, boom)
	}
}
