package payments

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// maxHolderRunes bounds the cardholder and account holder names.
const maxHolderRunes = 200

// ValidateMethod checks what a payer typed before anything is charged, for every kind of
// payable (400 invalid_request naming the field: payment_method, card.number, card.exp_month,
// card.exp_year, card.cvc, card.name, sepa_debit.iban, sepa_debit.account_holder). Messages
// never repeat the number or the IBAN. currency is the payable's: SEPA Direct Debit takes only
// EUR; what names the payable in that refusal ("checkout sessions", "invoices").
func ValidateMethod(method ports.PaymentMethodKind, card *ports.CardDetails, sepa *ports.SEPADetails, currency core.Currency, what string, now time.Time) error {
	in := struct {
		Method ports.PaymentMethodKind
		Card   *ports.CardDetails
		SEPA   *ports.SEPADetails
	}{method, card, sepa}
	switch in.Method {
	case "":
		return core.MissingField("payment_method")
	case ports.MethodCard:
		if in.SEPA != nil {
			return core.Invalid(core.CodeParameterUnknown, "sepa_debit", "sepa_debit must not be given with payment_method card.")
		}
		if in.Card == nil {
			return core.MissingField("card")
		}
		return validateCard(*in.Card, now)
	case ports.MethodSEPADebit:
		if in.Card != nil {
			return core.Invalid(core.CodeParameterUnknown, "card", "card must not be given with payment_method sepa_debit.")
		}
		if currency != "EUR" {
			return core.Invalid("payment_method_unsupported", "payment_method",
				"sepa_debit can pay only EUR %s; this one is in %s.", what, currency)
		}
		if in.SEPA == nil {
			return core.MissingField("sepa_debit")
		}
		return validateSEPA(*in.SEPA)
	default:
		return core.InvalidField("payment_method", "payment_method must be card or sepa_debit.")
	}
}

func validateCard(c ports.CardDetails, now time.Time) error {
	if strings.TrimSpace(c.Number) == "" {
		return core.MissingField("card.number")
	}
	number, ok := core.NormalizeCardNumber(c.Number)
	if !ok {
		return core.InvalidField("card.number", "The card number must have 12 to 19 digits.")
	}
	if !core.LuhnValid(number) {
		return core.InvalidField("card.number", "The card number is not valid (check digit mismatch).")
	}
	if c.ExpMonth < 1 || c.ExpMonth > 12 {
		return core.InvalidField("card.exp_month", "card.exp_month must be 1 to 12.")
	}
	year, ok := core.NormalizeExpiryYear(c.ExpYear)
	if !ok || year > now.Year()+core.MaxExpiryYearsAhead {
		return core.InvalidField("card.exp_year", "card.exp_year must be a two- or four-digit year within %d years.", core.MaxExpiryYearsAhead)
	}
	if !core.ExpiryValid(c.ExpMonth, year, now) {
		return core.Invalid("card_expired", "card.exp_year", "The card's expiry date has passed.")
	}
	want := 3
	if core.CardBrand(number) == core.BrandAmex {
		want = 4
	}
	if c.CVC == "" {
		return core.MissingField("card.cvc")
	}
	if len(c.CVC) != want || !digitsOnly(c.CVC) {
		return core.InvalidField("card.cvc", "card.cvc must be %d digits for this card.", want)
	}
	if utf8.RuneCountInString(c.Name) > maxHolderRunes {
		return core.InvalidField("card.name", "card.name must be at most %d characters.", maxHolderRunes)
	}
	return nil
}

func validateSEPA(d ports.SEPADetails) error {
	if strings.TrimSpace(d.IBAN) == "" {
		return core.MissingField("sepa_debit.iban")
	}
	if _, ok := core.NormalizeIBAN(d.IBAN); !ok {
		return core.InvalidField("sepa_debit.iban", "The IBAN is not a valid IBAN of a SEPA country.")
	}
	holder := strings.TrimSpace(d.AccountHolder)
	if holder == "" {
		return core.MissingField("sepa_debit.account_holder")
	}
	if utf8.RuneCountInString(holder) > maxHolderRunes {
		return core.InvalidField("sepa_debit.account_holder", "sepa_debit.account_holder must be at most %d characters.", maxHolderRunes)
	}
	return nil
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
