package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"bokat"
)

// KeySize is the length of a server secret key: AES-256.
const KeySize = 32

// Keyring seals secrets at rest with AES-256-GCM under the server's secret
// keys. The first key seals; every key opens, found by the key id stored
// beside each sealed value, so keys can rotate: add the new key first, keep
// the old ones until every secret sealed with them is gone or re-sealed.
type Keyring struct {
	sealID string
	aeads  map[string]cipher.AEAD
}

// KeyID returns the id of a key: a hash of it, which reveals nothing of the key.
func KeyID(key []byte) string {
	h := sha256.New()
	h.Write([]byte("bokat secret key id\x00"))
	h.Write(key)
	return bokat.SecretKeyIDPrefix + hex.EncodeToString(h.Sum(nil))[:16]
}

// NewKeyring returns a Keyring over keys (each KeySize bytes); keys[0] seals.
func NewKeyring(keys ...[]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("keyring: no key")
	}
	k := &Keyring{aeads: make(map[string]cipher.AEAD, len(keys))}
	for i, key := range keys {
		if len(key) != KeySize {
			return nil, fmt.Errorf("keyring: key %d is %d bytes, want %d", i+1, len(key), KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		id := KeyID(key)
		if i == 0 {
			k.sealID = id
		}
		k.aeads[id] = aead
	}
	return k, nil
}

// SealingKeyID returns the id of the key new secrets are sealed with.
func (k *Keyring) SealingKeyID() string { return k.sealID }

// Seal encrypts plaintext bound to context (which must be given again to
// Open: a sealed value moved to another record does not open). It returns
// the key id and base64 of nonce || ciphertext.
func (k *Keyring) Seal(plaintext []byte, context string) (keyID, sealed string, err error) {
	aead := k.aeads[k.sealID]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", "", err
	}
	out := aead.Seal(nonce, nonce, plaintext, []byte(context))
	return k.sealID, base64.StdEncoding.EncodeToString(out), nil
}

// ErrUnknownKey means a value was sealed with a key the keyring lacks.
var ErrUnknownKey = errors.New("sealed with a key this server does not have")

// Open decrypts a value sealed by Seal.
func (k *Keyring) Open(keyID, sealed, context string) ([]byte, error) {
	aead, ok := k.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("key id %s: %w", keyID, ErrUnknownKey)
	}
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, errors.New("sealed value is malformed")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(context))
	if err != nil {
		return nil, errors.New("sealed value does not open: wrong key or altered")
	}
	return plain, nil
}
