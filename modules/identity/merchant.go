package identity

import (
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// PrefixUser is the id prefix of a dashboard user.
const PrefixUser = "usr_"

// MerchantInput is the operator's request to create a merchant (D1). With OwnerPassword, Email
// becomes the merchant's first dashboard user.
type MerchantInput struct {
	Name, Country, Email string
	Onboarded            bool
	OwnerPassword        *string
}

// MerchantSnapshot is the stored form of a merchant: what a store writes, and what it hands to
// RehydrateMerchant.
type MerchantSnapshot struct {
	ID, Name, Country, Email string
	Onboarded                bool // false: live requests that move money get merchant_not_ready
	Created                  time.Time
}

// Merchant is a business that takes payments through Kassa.
type Merchant struct {
	r MerchantSnapshot
}

// NewMerchant checks in (its text fields trimmed) and builds a new merchant created at now.
// Every rule is checked, the owner's password length included, before anything is built; the
// first violation is a 400 invalid_request naming the request field.
func NewMerchant(in MerchantInput, now time.Time) (*Merchant, error) {
	in, err := normalizeMerchant(in)
	if err != nil {
		return nil, err
	}
	return &Merchant{r: MerchantSnapshot{
		ID: core.NewID(core.PrefixMerchant), Name: in.Name, Country: in.Country, Email: in.Email,
		Onboarded: in.Onboarded, Created: now,
	}}, nil
}

// RehydrateMerchant rebuilds a merchant from storage without validating it.
func RehydrateMerchant(r MerchantSnapshot) *Merchant { return &Merchant{r: r} }

// Snapshot returns a copy of the merchant's state for storage.
func (m *Merchant) Snapshot() MerchantSnapshot { return m.r }

func (m *Merchant) ID() string         { return m.r.ID }
func (m *Merchant) Name() string       { return m.r.Name }
func (m *Merchant) Country() string    { return m.r.Country }
func (m *Merchant) Email() string      { return m.r.Email }
func (m *Merchant) Created() time.Time { return m.r.Created }

// Onboarded is false until the operator completes onboarding: live requests that move money
// get merchant_not_ready.
func (m *Merchant) Onboarded() bool { return m.r.Onboarded }

// Onboard marks the merchant onboarded; onboarding an onboarded merchant changes nothing.
func (m *Merchant) Onboard() { m.r.Onboarded = true }

// UserSnapshot is the stored form of a dashboard user: what a store writes, and what it hands
// to RehydrateUser.
type UserSnapshot struct {
	ID           string
	MerchantID   string
	Email        string
	PasswordHash string // encoded argon2id hash (HashPassword)
	Created      time.Time
}

// User is a dashboard login of a merchant. Only an argon2id hash of the password is kept; the
// password itself never is.
type User struct {
	r UserSnapshot
}

// NewUser checks the e-mail and password and builds a new dashboard user of the merchant,
// keeping only the password's hash. A violation is a 400 invalid_request naming email or
// password.
func NewUser(merchantID, email, password string, now time.Time) (*User, error) {
	email = strings.TrimSpace(email)
	if !core.ValidEmail(email) {
		return nil, core.InvalidField("email", "email is not a valid e-mail address.")
	}
	if err := checkPassword("password", password); err != nil {
		return nil, err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return nil, err
	}
	return &User{r: UserSnapshot{ID: core.NewID(PrefixUser), MerchantID: merchantID, Email: email, PasswordHash: hash, Created: now}}, nil
}

// RehydrateUser rebuilds a user from storage without validating it.
func RehydrateUser(r UserSnapshot) *User { return &User{r: r} }

// Snapshot returns a copy of the user's state for storage.
func (u *User) Snapshot() UserSnapshot { return u.r }

func (u *User) ID() string         { return u.r.ID }
func (u *User) MerchantID() string { return u.r.MerchantID }
func (u *User) Email() string      { return u.r.Email }
func (u *User) Created() time.Time { return u.r.Created }

// PasswordMatches reports whether password is the user's, comparing in constant time; the
// error is ErrBadPasswordHash when the stored hash cannot be read.
func (u *User) PasswordMatches(password string) (bool, error) {
	return VerifyPassword(u.r.PasswordHash, password)
}

// ErrMerchantNotFound is the 404 for an unknown merchant id.
var ErrMerchantNotFound = &core.Error{Type: core.TypeNotFound, Code: "merchant_not_found", Message: "No such merchant."}

// ErrAPIKeyNotFound is the 404 for an unknown API key id.
var ErrAPIKeyNotFound = &core.Error{Type: core.TypeNotFound, Code: "api_key_not_found", Message: "No such API key."}
