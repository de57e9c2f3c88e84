package sqlstore

import (
	"context"
	"errors"
	"strings"
	"testing"
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
