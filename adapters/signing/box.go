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
// Version 0 is the secret in clear: it is what a Box without a key writes (development, when no
// key is configured; `kassa serve` warns), and a keyed Box still reads such rows, so setting a
// key later needs no migration (newly written secrets are sealed; rotating re-seals).
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
	aead cipher.AEAD
}

// NewBox returns a Box sealing with key (32 bytes), or a clear Box when key is empty.
func NewBox(key []byte) (*Box, error) {
	if len(key) == 0 {
		return &Box{}, nil
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("signing: webhook secret key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
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
func (b *Box) Sealing() bool { return b != nil && b.aead != nil }

// Seal returns the stored form of secret, bound to aad (the endpoint id).
func (b *Box) Seal(secret, aad string) ([]byte, error) {
	if !b.Sealing() {
		return append([]byte{versionClear}, secret...), nil
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte{versionAESGCM}, nonce...)
	return b.aead.Seal(out, nonce, []byte(secret), []byte(aad)), nil
}

// Open returns the secret stored as sealed under aad.
func (b *Box) Open(sealed []byte, aad string) (string, error) {
	if len(sealed) == 0 {
		return "", ErrSealed
	}
	switch sealed[0] {
	case versionClear:
		return string(sealed[1:]), nil
	case versionAESGCM:
		if !b.Sealing() {
			return "", ErrSealed
		}
		ns := b.aead.NonceSize()
		if len(sealed) < 1+ns {
			return "", ErrSealed
		}
		plain, err := b.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], []byte(aad))
		if err != nil {
			return "", ErrSealed
		}
		return string(plain), nil
	}
	return "", ErrSealed
}
