package sandbox

import "github.com/kassa-pay/kassa/ports"

// Scenarios: what a test number or IBAN does. The code travels in the processor reference,
// so it is short and has no underscore.
const (
	scOK         = "ok"       // succeeds (card) / processing, then settles succeeded (SEPA)
	scFailed     = "failed"   // declined at once
	sc3DS        = "3ds"      // requires 3-D Secure on every on-session charge
	scDispute    = "dispute"  // succeeds, then a dispute opens after DisputeDelay
	scInstant    = "instant"  // succeeds, funds available at once
	scAttachOnly = "attach"   // saving (0 amount) succeeds, every charge fails generic_decline
	scSEPAFail   = "sepafail" // processing, then settles failed insufficient_funds
)

// testCard is the behaviour of one well-known test number (D6 plus a few common extras).
type testCard struct {
	scenario string
	decline  string // scenario failed: the decline code
}

// testCards are the sandbox's special card numbers. Any other Luhn-valid number succeeds.
var testCards = map[string]testCard{
	"4242424242424242": {scenario: scOK},
	"4000000000000002": {scenario: scFailed, decline: ports.DeclineGenericDecline},
	"4000000000009995": {scenario: scFailed, decline: ports.DeclineInsufficientFunds},
	"4000000000009987": {scenario: scFailed, decline: ports.DeclineLostCard},
	"4000000000000069": {scenario: scFailed, decline: ports.DeclineExpiredCard},
	"4000000000000127": {scenario: scFailed, decline: ports.DeclineIncorrectCVC},
	"4000002760003184": {scenario: sc3DS},
	"4000000000000259": {scenario: scDispute},
	"4000000000000077": {scenario: scInstant},
	// Not in D6, for subscription dunning tests (D8): saving the card works, charges fail.
	"4000000000000341": {scenario: scAttachOnly},
}

// cardDeclineMessages are the buyer-facing sentences of each decline code of a card charge.
var cardDeclineMessages = map[string]string{
	ports.DeclineGenericDecline:         "Your card was declined.",
	ports.DeclineInsufficientFunds:      "Your card has insufficient funds.",
	ports.DeclineLostCard:               "Your card was declined.",
	ports.DeclineExpiredCard:            "Your card has expired.",
	ports.DeclineIncorrectCVC:           "Your card's security code is incorrect.",
	ports.DeclineIncorrectNumber:        "Your card number is incorrect.",
	ports.DeclineInvalidExpiryMonth:     "Your card's expiration month is invalid.",
	ports.DeclineInvalidExpiryYear:      "Your card's expiration year is invalid.",
	ports.DeclineInvalidCVC:             "Your card's security code is invalid.",
	ports.DeclineAuthenticationFailed:   "We are unable to authenticate your payment method.",
	ports.DeclineAuthenticationRequired: "Your card requires authentication; the payment must be completed by you.",
}

// sepaDeclineMessages are the sentences of each decline code of a SEPA Direct Debit: the bank
// account is debited, no card is involved.
var sepaDeclineMessages = map[string]string{
	ports.DeclineGenericDecline:    "The bank declined the direct debit.",
	ports.DeclineInsufficientFunds: "The bank account has insufficient funds for this direct debit.",
	ports.DeclineInvalidIBAN:       "The IBAN is invalid.",
}

// declineMessage is the sentence of code for a charge of the method (card or SEPA), falling
// back to the method's generic decline.
func declineMessage(sepa bool, code string) string {
	msgs := cardDeclineMessages
	if sepa {
		msgs = sepaDeclineMessages
	}
	if m, ok := msgs[code]; ok {
		return m
	}
	return msgs[ports.DeclineGenericDecline]
}

// Special IBANs (D6). Any other valid IBAN of a SEPA country settles succeeded.
var testIBANs = map[string]string{
	"DE89370400440532013000": scOK,
	"DE62370400440532013001": scSEPAFail,
}

// issuerCountries maps ISO 3166-1 numeric codes to alpha-2 for the country test numbers
// 400000CCC… (the convention of the well-known test data: 4000002760000016 is a German card,
// 4000008260000000 a British one). It covers the EEA, the other SEPA card markets and a few
// large non-European ones; every other card is issued in DefaultCardCountry.
var issuerCountries = map[string]string{
	"040": "AT", "056": "BE", "100": "BG", "191": "HR", "196": "CY", "203": "CZ",
	"208": "DK", "233": "EE", "246": "FI", "250": "FR", "276": "DE", "300": "GR",
	"348": "HU", "352": "IS", "372": "IE", "380": "IT", "428": "LV", "438": "LI",
	"440": "LT", "442": "LU", "470": "MT", "528": "NL", "578": "NO", "616": "PL",
	"620": "PT", "642": "RO", "703": "SK", "705": "SI", "724": "ES", "752": "SE",
	"756": "CH", "826": "GB", "840": "US", "124": "CA", "036": "AU", "392": "JP",
	"076": "BR", "484": "MX", "554": "NZ", "702": "SG", "344": "HK", "356": "IN",
}

// DefaultCardCountry is the issuing country of every card not matched by issuerCountries
// (4242424242424242 included): outside the EEA.
const DefaultCardCountry = "US"

// Funding types. Every card is credit except these well-known ones.
const (
	FundingCredit  = "credit"
	FundingDebit   = "debit"
	FundingPrepaid = "prepaid"
)

var cardFunding = map[string]string{
	"4000056655665556": FundingDebit,   // Visa debit
	"5200828282828210": FundingDebit,   // Mastercard debit
	"5105105105105100": FundingPrepaid, // Mastercard prepaid
}

// cardCountry is the issuing country of a normalised number.
func cardCountry(number string) string {
	if len(number) >= 9 && number[:6] == "400000" {
		if cc, ok := issuerCountries[number[6:9]]; ok {
			return cc
		}
	}
	return DefaultCardCountry
}

func cardFundingOf(number string) string {
	if f, ok := cardFunding[number]; ok {
		return f
	}
	return FundingCredit
}
