package identity

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// PasswordParams are the argon2id cost parameters of new hashes.
type PasswordParams struct {
	Memory      uint32 // KiB
	Iterations  uint32
	Parallelism uint8
	SaltLength  uint32
	KeyLength   uint32
}

// DefaultPasswordParams follow the OWASP recommendation for argon2id (19 MiB, 2 passes, 1 lane).
var DefaultPasswordParams = PasswordParams{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// ErrBadPasswordHash means an encoded hash could not be parsed.
var ErrBadPasswordHash = errors.New("identity: malformed password hash")

var b64 = base64.RawStdEncoding

// HashPassword hashes password with argon2id and a random salt and returns the PHC string
// "$argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>" (unpadded standard base64).
func HashPassword(password string) (string, error) {
	return hashPasswordWith(password, DefaultPasswordParams)
}

func hashPasswordWith(password string, p PasswordParams) (string, error) {
	salt := make([]byte, p.SaltLength)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, p.Iterations, p.Memory, p.Parallelism, p.KeyLength)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Iterations, p.Parallelism, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// VerifyPassword reports whether password matches the encoded hash, comparing in constant
// time. It returns ErrBadPasswordHash when encoded is not a hash HashPassword could produce.
func VerifyPassword(encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, ErrBadPasswordHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, ErrBadPasswordHash
	}
	var p PasswordParams
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Iterations, &p.Parallelism); err != nil {
		return false, ErrBadPasswordHash
	}
	// Refuse absurd costs so a corrupted row cannot exhaust memory or CPU.
	if p.Memory < 8 || p.Memory > 1<<20 || p.Iterations < 1 || p.Iterations > 100 || p.Parallelism < 1 {
		return false, ErrBadPasswordHash
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return false, ErrBadPasswordHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) < 16 || len(want) > 128 {
		return false, ErrBadPasswordHash
	}
	got := argon2.IDKey([]byte(password), salt, p.Iterations, p.Memory, p.Parallelism, uint32(len(want))) //nolint:gosec // G115: len(want) ≤ 128, checked above
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
