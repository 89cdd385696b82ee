package signing

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Webhook endpoint secrets must be usable as HMAC keys at every delivery, so unlike API keys
// they cannot be stored as a hash. They are stored sealed with AES-256-GCM under a key from
// configuration (KASSA_WEBHOOK_SECRET_KEY), with the endpoint id as additional data so that a
// sealed secret cannot be moved to another endpoint's row. A database dump or backup alone
// then does not reveal them.
//
// Sealed form: one version byte, then for version 1 a 12-byte nonce and the GCM ciphertext.
// Version 0 is the secret in clear: what a Box without a key writes (only tests and tools do;
// `kassa serve` refuses to start without a key) and what rows written before a key was
// configured hold. A keyed Box still reads such rows, and `kassa serve` seals them at start-up
// (WebhookStore.ResealSecrets).
//
// Rotation: a Box holds a ring of keys, the first one current. It seals with the current key
// and opens with whichever key of the ring authenticates the value (GCM fails on any other),
// so KASSA_WEBHOOK_SECRET_KEY="new,old" reads everything sealed under either; the start-up
// re-seal moves every row to the new key, after which the old one can be removed.
const (
	versionClear  byte = 0
	versionAESGCM byte = 1
)

// KeySize is the length of a sealing key (AES-256).
const KeySize = 32

// ErrSealed is returned when a sealed secret cannot be opened (wrong key, tampered row, or a
// sealed secret read by a Box without a key).
var ErrSealed = errors.New("signing: cannot open sealed webhook secret")

// Box seals and opens webhook secrets. The zero value (and NewBox(nil)) stores in clear.
type Box struct {
	ring []cipher.AEAD // ring[0] seals; every one opens
}

// NewBox returns a Box sealing with key (32 bytes) and opening with key and every one of
// older, or a clear Box when key is empty.
func NewBox(key []byte, older ...[]byte) (*Box, error) {
	if len(key) == 0 {
		if len(older) > 0 {
			return nil, errors.New("signing: older webhook secret keys need a current key")
		}
		return &Box{}, nil
	}
	b := &Box{}
	for _, k := range append([][]byte{key}, older...) {
		if len(k) != KeySize {
			return nil, fmt.Errorf("signing: webhook secret key must be %d bytes, got %d", KeySize, len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		b.ring = append(b.ring, aead)
	}
	return b, nil
}

// NewKey returns a fresh random sealing key, base64-encoded as configuration takes it.
func NewKey() string {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.StdEncoding.EncodeToString(k)
}

// ParseKeys decodes a comma-separated list of sealing keys (the current one first, then older
// ones still able to open), each as ParseKey takes it. An empty string gives no key.
func ParseKeys(s string) ([][]byte, error) {
	var out [][]byte
	for i, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			if strings.TrimSpace(s) == "" {
				return nil, nil
			}
			return nil, fmt.Errorf("signing: webhook secret key %d of the list is empty", i+1)
		}
		k, err := ParseKey(part)
		if err != nil {
			return nil, fmt.Errorf("key %d of the list: %w", i+1, err)
		}
		out = append(out, k)
	}
	return out, nil
}

// ParseKey decodes a sealing key given in configuration as standard or URL-safe base64 (with
// or without padding) or as 64 hex characters. An empty string gives a nil key (clear Box).
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if len(s) == 2*KeySize {
		if k, err := decodeHex(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("signing: webhook secret key must be %d bytes in base64 or hex", KeySize)
}

func decodeHex(s string) ([]byte, error) {
	out := make([]byte, len(s)/2)
	for i := range out {
		var b byte
		for _, c := range []byte(s[2*i : 2*i+2]) {
			switch {
			case c >= '0' && c <= '9':
				b = b<<4 | (c - '0')
			case c >= 'a' && c <= 'f':
				b = b<<4 | (c - 'a' + 10)
			case c >= 'A' && c <= 'F':
				b = b<<4 | (c - 'A' + 10)
			default:
				return nil, errors.New("not hex")
			}
		}
		out[i] = b
	}
	return out, nil
}

// Sealing reports whether the Box encrypts (a key is configured).
func (b *Box) Sealing() bool { return b != nil && len(b.ring) > 0 }

// Seal returns the stored form of secret, bound to aad (the endpoint id), under the current key.
func (b *Box) Seal(secret, aad string) ([]byte, error) {
	if !b.Sealing() {
		return append([]byte{versionClear}, secret...), nil
	}
	aead := b.ring[0]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte{versionAESGCM}, nonce...)
	return aead.Seal(out, nonce, []byte(secret), []byte(aad)), nil
}

// Open returns the secret stored as sealed under aad.
func (b *Box) Open(sealed []byte, aad string) (string, error) {
	s, _, err := b.open(sealed, aad)
	return s, err
}

// Current reports whether sealed is sealed under the current key (false for a clear value,
// one under an older key of the ring, or one no key opens): a value to re-seal when it opens.
func (b *Box) Current(sealed []byte, aad string) bool {
	_, i, err := b.open(sealed, aad)
	return err == nil && i == 0 && b.Sealing()
}

// open returns the secret and the index in the ring of the key that opened it (-1: clear).
func (b *Box) open(sealed []byte, aad string) (string, int, error) {
	if len(sealed) == 0 {
		return "", -1, ErrSealed
	}
	switch sealed[0] {
	case versionClear:
		return string(sealed[1:]), -1, nil
	case versionAESGCM:
		if !b.Sealing() {
			return "", -1, ErrSealed
		}
		for i, aead := range b.ring {
			ns := aead.NonceSize()
			if len(sealed) < 1+ns {
				return "", -1, ErrSealed
			}
			if plain, err := aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], []byte(aad)); err == nil {
				return string(plain), i, nil
			}
		}
	}
	return "", -1, ErrSealed
}
