// Package seal encrypts small values kept in the store (webhooks' signing
// keys, credentials in their URLs) with a key kept outside it, so that a
// copy of the database — a backup, a dump, a replica — does not hold them.
//
// The key is 32 random bytes, written in hex to a file (by default in the
// runtime's home), created with mode 0600 the first time a value is
// sealed; every process that seals or opens values of one store needs the
// same file. A sealed value is
//
//	sealed:v1:KEYID:BASE64URL(NONCE || AES-256-GCM(VALUE))
//
// where KEYID is the first 8 hex digits of the key's SHA-256, so that a
// value sealed with another key is named as such, and the caller's
// associated data (what the value is, whose it is) binds it to its place:
// a sealed value copied elsewhere does not open.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Prefix begins every sealed value.
const Prefix = "sealed:v1:"

// KeySize is a key's size in bytes.
const KeySize = 32

var (
	// ErrMalformed: a string is not a sealed value.
	ErrMalformed = errors.New("seal: not a sealed value")
	// ErrWrongKey: a value was sealed with another key.
	ErrWrongKey = errors.New("seal: sealed with another key")
	// ErrTampered: a value does not open with its key: it was altered, or
	// sealed for another place.
	ErrTampered = errors.New("seal: the value does not open")
	// ErrBadKey: a key file is missing, malformed or unsafe.
	ErrBadKey = errors.New("seal: bad key")
)

// Key seals and opens values.
type Key struct {
	aead cipher.AEAD
	id   string
}

// NewKey is the key of raw (KeySize bytes).
func NewKey(raw []byte) (*Key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrBadKey, len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	sum := sha256.Sum256(raw)
	return &Key{aead: aead, id: hex.EncodeToString(sum[:4])}, nil
}

// ID is the key's id: the first 8 hex digits of its SHA-256.
func (k *Key) ID() string { return k.id }

// Seal seals value for the place ad names.
func (k *Key) Seal(value, ad []byte) string {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail
	}
	box := k.aead.Seal(nonce, nonce, value, ad)
	return Prefix + k.id + ":" + base64.RawURLEncoding.EncodeToString(box)
}

// Open opens a sealed value for the place ad names. Its errors wrap
// ErrMalformed, ErrWrongKey or ErrTampered, and never hold the value.
func (k *Key) Open(sealed string, ad []byte) ([]byte, error) {
	rest, ok := strings.CutPrefix(sealed, Prefix)
	if !ok {
		return nil, fmt.Errorf("%w: no %q prefix", ErrMalformed, Prefix)
	}
	id, b64, ok := strings.Cut(rest, ":")
	if !ok || len(id) != 8 {
		return nil, fmt.Errorf("%w: no key id", ErrMalformed)
	}
	if id != k.id {
		return nil, fmt.Errorf("%w: key %s, this process's is %s", ErrWrongKey, id, k.id)
	}
	box, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	n := k.aead.NonceSize()
	if len(box) < n+k.aead.Overhead() {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformed, len(box))
	}
	value, err := k.aead.Open(nil, box[:n], box[n:], ad)
	if err != nil {
		return nil, ErrTampered
	}
	return value, nil
}

// IsSealed reports whether s is meant as a sealed value (it begins with
// Prefix).
func IsSealed(s string) bool { return strings.HasPrefix(s, Prefix) }
