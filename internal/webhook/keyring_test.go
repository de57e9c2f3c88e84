package webhook

import (
	"bytes"
	"errors"
	"testing"
)

func TestKeyringSealsAndRotates(t *testing.T) {
	t.Parallel()
	oldKey := bytes.Repeat([]byte{1}, KeySize)
	newKey := bytes.Repeat([]byte{2}, KeySize)
	before, err := NewKeyring(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	oldID, sealed, err := before.Seal([]byte("whsec_abc"), "endpoint-1")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains([]byte(sealed), []byte("whsec_abc")) || oldID != KeyID(oldKey) {
		t.Fatalf("sealed %q id %q", sealed, oldID)
	}
	after, err := NewKeyring(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := after.Open(oldID, sealed, "endpoint-1"); err != nil || string(got) != "whsec_abc" {
		t.Fatalf("open with the rotated keyring: %q %v", got, err)
	}
	if id, _, _ := after.Seal([]byte("x"), "c"); id != KeyID(newKey) {
		t.Fatalf("rotated keyring seals with %s, want the new key %s", id, KeyID(newKey))
	}
	if _, err := after.Open(oldID, sealed, "endpoint-2"); err == nil {
		t.Fatal("a sealed secret opened under another endpoint's context")
	}
	onlyNew, _ := NewKeyring(newKey)
	if _, err := onlyNew.Open(oldID, sealed, "endpoint-1"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("open without the old key: %v, want ErrUnknownKey", err)
	}
	tampered := []byte(sealed)
	tampered[20] ^= 1
	if _, err := after.Open(oldID, string(tampered), "endpoint-1"); err == nil {
		t.Fatal("a tampered value opened")
	}
	if _, err := NewKeyring([]byte("short")); err == nil {
		t.Fatal("NewKeyring accepted a short key")
	}
}
