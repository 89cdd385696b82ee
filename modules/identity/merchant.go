package identity

import (
	"time"

	"github.com/kassa-pay/kassa/core"
)

// PrefixUser is the id prefix of a dashboard user.
const PrefixUser = "usr_"

// Merchant is a business that takes payments through Kassa.
type Merchant struct {
	ID, Name, Country, Email string
	Onboarded                bool // false: live requests that move money get merchant_not_ready
	Created                  time.Time
}

// NewMerchant is the operator's request to create a merchant (D1). With OwnerPassword, Email
// becomes the merchant's first dashboard user.
type NewMerchant struct {
	Name, Country, Email string
	Onboarded            bool
	OwnerPassword        *string
}

// User is a dashboard login of a merchant. PasswordHash is an encoded argon2id hash
// (HashPassword); the password itself is never stored.
type User struct {
	ID           string
	MerchantID   string
	Email        string
	PasswordHash string
	Created      time.Time
}

// ErrMerchantNotFound is the 404 for an unknown merchant id.
var ErrMerchantNotFound = &core.Error{Type: core.TypeNotFound, Code: "merchant_not_found", Message: "No such merchant."}

// ErrAPIKeyNotFound is the 404 for an unknown API key id.
var ErrAPIKeyNotFound = &core.Error{Type: core.TypeNotFound, Code: "api_key_not_found", Message: "No such API key."}
