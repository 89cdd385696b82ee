package identity

import (
	"strings"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// Field limits.
const (
	MaxMerchantNameLen = 200
	MinPasswordLen     = 10
	MaxPasswordLen     = 200
	MaxKeyNameLen      = 100
)

// normalizeMerchant trims the text fields of in and checks every rule, returning the first
// violation as a 400 invalid_request naming the field.
func normalizeMerchant(in MerchantInput) (MerchantInput, error) {
	in.Name = strings.TrimSpace(in.Name)
	in.Email = strings.TrimSpace(in.Email)
	if in.Name == "" {
		return in, core.InvalidField("name", "name must be 1 to %d characters.", MaxMerchantNameLen)
	}
	if utf8.RuneCountInString(in.Name) > MaxMerchantNameLen {
		return in, core.InvalidField("name", "name must be at most %d characters.", MaxMerchantNameLen)
	}
	if in.Country == "" {
		return in, core.InvalidField("country", "country must be a two-letter upper-case ISO 3166-1 code, e.g. DE.")
	}
	if !validCountry(in.Country) {
		return in, core.InvalidField("country", "country must be a two-letter upper-case ISO 3166-1 code, e.g. DE.")
	}
	if in.Email == "" {
		return in, core.InvalidField("email", "email is not a valid e-mail address.")
	}
	if !core.ValidEmail(in.Email) {
		return in, core.InvalidField("email", "email is not a valid e-mail address.")
	}
	if in.OwnerPassword != nil {
		if err := checkPassword("owner_password", *in.OwnerPassword); err != nil {
			return in, err
		}
	}
	return in, nil
}

// checkPassword checks a new password's length; param names the request field.
func checkPassword(param, password string) error {
	n := utf8.RuneCountInString(password)
	if n < MinPasswordLen || n > MaxPasswordLen {
		return core.InvalidField(param, "%s must be %d to %d characters.", param, MinPasswordLen, MaxPasswordLen)
	}
	return nil
}

func validCountry(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// checkKeyInput validates a key's name and environment.
func checkKeyInput(name string, env core.Environment) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return name, core.InvalidField("name", "name must be 1 to %d characters.", MaxKeyNameLen)
	}
	if utf8.RuneCountInString(name) > MaxKeyNameLen {
		return name, core.InvalidField("name", "name must be at most %d characters.", MaxKeyNameLen)
	}
	if !env.Valid() {
		return name, core.InvalidField("mode", "mode must be test or live.")
	}
	return name, nil
}
