package checkoutweb

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/ports"
)

// Form field names of the payment forms. The card inputs carry the standard autocomplete
// tokens (D6) in the templates; checkout.js reads the same names.
const (
	fieldMethod  = "method"
	fieldName    = "card_name"
	fieldNumber  = "card_number"
	fieldExp     = "card_exp"
	fieldCVC     = "card_cvc"
	fieldIBAN    = "iban"
	fieldHolder  = "account_holder"
	fieldSecret  = "cs"
	fieldAction  = "action"
	actionPass   = "complete"
	actionFail   = "fail"
	maxFieldLen  = 200
	maxFormBytes = 16 << 10
)

// Buyer-facing messages of the shape checks. checkout.js shows the same texts.
const (
	msgNumber  = "Your card number is invalid. Check the digits and try again."
	msgExp     = "Enter the expiry date as MM / YY."
	msgExpired = "Your card has expired."
	msgCVC     = "Enter the 3 or 4 digit security code."
	msgIBAN    = "Your IBAN is invalid. Check it and try again."
	msgHolder  = "Enter the name of the account holder."
	msgMethod  = "Choose a payment method."
)

// paymentForm is what the buyer typed, parsed. Only Name, Exp and Holder are ever written
// back into a page; the number, the security code and the IBAN are not echoed.
type paymentForm struct {
	Method ports.PaymentMethodKind
	Name   string
	Number string
	Exp    string
	CVC    string
	IBAN   string
	Holder string
}

// fieldErrors maps a form field to the message shown next to it.
type fieldErrors map[string]string

func parsePaymentForm(v url.Values) paymentForm {
	get := func(k string) string {
		s := strings.TrimSpace(v.Get(k))
		if len(s) > maxFieldLen {
			s = s[:maxFieldLen]
		}
		return s
	}
	return paymentForm{
		Method: ports.PaymentMethodKind(get(fieldMethod)),
		Name:   get(fieldName), Number: get(fieldNumber), Exp: get(fieldExp), CVC: get(fieldCVC),
		IBAN: get(fieldIBAN), Holder: get(fieldHolder),
	}
}

// validate checks the shape of the input (Luhn, expiry, security code, IBAN) so the buyer
// gets every mistake at once, next to its field, before anything reaches the processor. The
// use case checks again; this is for the buyer, not for safety.
func (f paymentForm) validate(now time.Time) (checkout.ConfirmInput, fieldErrors) {
	errs := fieldErrors{}
	switch f.Method {
	case ports.MethodCard:
		number, ok := core.NormalizeCardNumber(f.Number)
		if !ok || !core.LuhnValid(number) {
			errs[fieldNumber] = msgNumber
		}
		month, year, ok := parseExpiry(f.Exp)
		switch {
		case !ok:
			errs[fieldExp] = msgExp
		case !core.ExpiryValid(month, year, now):
			errs[fieldExp] = msgExpired
		}
		if !validCVC(f.CVC) {
			errs[fieldCVC] = msgCVC
		}
		if len(errs) > 0 {
			return checkout.ConfirmInput{}, errs
		}
		full, _ := core.NormalizeExpiryYear(year)
		return checkout.ConfirmInput{Method: ports.MethodCard, Card: &ports.CardDetails{
			Number: number, ExpMonth: month, ExpYear: full, CVC: f.CVC, Name: f.Name,
		}}, nil
	case ports.MethodSEPADebit:
		iban, ok := core.NormalizeIBAN(f.IBAN)
		if !ok {
			errs[fieldIBAN] = msgIBAN
		}
		if len([]rune(f.Holder)) < 2 {
			errs[fieldHolder] = msgHolder
		}
		if len(errs) > 0 {
			return checkout.ConfirmInput{}, errs
		}
		return checkout.ConfirmInput{Method: ports.MethodSEPADebit, SEPA: &ports.SEPADetails{
			IBAN: iban, AccountHolder: f.Holder,
		}}, nil
	}
	errs[""] = msgMethod
	return checkout.ConfirmInput{}, errs
}

// parseExpiry reads "MM/YY", "MM / YY", "MM/YYYY", "MMYY" or "MM-YY".
func parseExpiry(s string) (month, year int, ok bool) {
	s = strings.NewReplacer(" ", "", "-", "/").Replace(s)
	var ms, ys string
	if i := strings.IndexByte(s, '/'); i >= 0 {
		ms, ys = s[:i], s[i+1:]
	} else if len(s) == 4 || len(s) == 6 {
		ms, ys = s[:2], s[2:]
	} else {
		return 0, 0, false
	}
	if len(ms) < 1 || len(ms) > 2 || (len(ys) != 2 && len(ys) != 4) {
		return 0, 0, false
	}
	m, err1 := strconv.Atoi(ms)
	y, err2 := strconv.Atoi(ys)
	if err1 != nil || err2 != nil || m < 1 || m > 12 || y < 0 {
		return 0, 0, false
	}
	return m, y, true
}

func validCVC(s string) bool {
	if len(s) < 3 || len(s) > 4 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// fieldOfParam maps a use case's error param (interface 7: card.number, sepa_debit.iban…) to
// the form field it is about; "" for a message that belongs to the whole form.
func fieldOfParam(param string) string {
	switch param {
	case "card.number":
		return fieldNumber
	case "card.exp_month", "card.exp_year":
		return fieldExp
	case "card.cvc":
		return fieldCVC
	case "card.name":
		return fieldName
	case "sepa_debit.iban":
		return fieldIBAN
	case "sepa_debit.account_holder":
		return fieldHolder
	}
	return ""
}

// declineMessages are the buyer's words for the processor's decline codes (D6).
var declineMessages = map[string]string{
	ports.DeclineGenericDecline:         "Your card was declined. Try another card.",
	ports.DeclineInsufficientFunds:      "Your card has insufficient funds. Try another card.",
	ports.DeclineLostCard:               "Your card was declined. Try another card.",
	ports.DeclineExpiredCard:            "Your card has expired. Try another card.",
	ports.DeclineIncorrectCVC:           "Your card's security code is incorrect.",
	ports.DeclineIncorrectNumber:        "Your card number is incorrect.",
	ports.DeclineInvalidExpiryMonth:     "Your card's expiry month is invalid.",
	ports.DeclineInvalidExpiryYear:      "Your card's expiry year is invalid.",
	ports.DeclineInvalidCVC:             "Your card's security code is invalid.",
	ports.DeclineAuthenticationFailed:   "We could not authenticate your payment. Try again or use another card.",
	ports.DeclineAuthenticationRequired: "Your bank asks for authentication. Try again.",
	ports.DeclineInvalidIBAN:            "Your IBAN was refused by the bank. Check it and try again.",
}

// declineMessage is what the page says about a decline: our words for a known code, else the
// use case's message (which never contains the number), else a generic sentence.
func declineMessage(d *checkout.DeclineError) string {
	return declineMessageOf(d.DeclineCode, d.Message)
}

// declineMessageOf is the buyer's words for decline code (message: the processor's, else).
func declineMessageOf(code, message string) string {
	if m, ok := declineMessages[code]; ok {
		return m
	}
	if message != "" {
		return message
	}
	return "Your payment was declined."
}

// fieldNames are the fields as the page labels them, in the page's order.
var fieldNames = []struct{ field, name string }{
	{fieldName, "name on card"}, {fieldNumber, "card number"}, {fieldExp, "expiry date"}, {fieldCVC, "security code"},
	{fieldHolder, "account holder"}, {fieldIBAN, "IBAN"},
}

// errorSummary is the message above the form when fields were refused: without JavaScript the
// page reloads with focus at the top, so the top says which fields to correct.
func errorSummary(errs map[string]string) string {
	var names []string
	for _, f := range fieldNames {
		if errs[f.field] != "" {
			names = append(names, f.name)
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return "Check the " + names[0] + "."
	}
	return "Check these fields: " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + "."
}
