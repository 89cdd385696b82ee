package checkoutweb

import (
	"net/url"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/ports"
)

var formNow = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func cardForm(number, exp, cvc string) url.Values {
	return url.Values{fieldMethod: {"card"}, fieldNumber: {number}, fieldExp: {exp}, fieldCVC: {cvc}, fieldName: {"Ada"}}
}

func TestValidateCard(t *testing.T) {
	cases := []struct {
		name   string
		form   url.Values
		errors []string
	}{
		{"valid with spaces", cardForm("4242 4242 4242 4242", "12 / 34", "123"), nil},
		{"valid four-digit year", cardForm("4242-4242-4242-4242", "01/2030", "1234"), nil},
		{"valid MMYY", cardForm("4242424242424242", "1130", "123"), nil},
		{"this month still valid", cardForm("4242424242424242", "11/26", "123"), nil},
		{"luhn", cardForm("4242424242424241", "12/34", "123"), []string{fieldNumber}},
		{"too short", cardForm("4242", "12/34", "123"), []string{fieldNumber}},
		{"letters", cardForm("4242abcd42424242", "12/34", "123"), []string{fieldNumber}},
		{"expired", cardForm("4242424242424242", "10/26", "123"), []string{fieldExp}},
		{"month 13", cardForm("4242424242424242", "13/30", "123"), []string{fieldExp}},
		{"garbage expiry", cardForm("4242424242424242", "soon", "123"), []string{fieldExp}},
		{"cvc short", cardForm("4242424242424242", "12/34", "12"), []string{fieldCVC}},
		{"cvc letters", cardForm("4242424242424242", "12/34", "12a"), []string{fieldCVC}},
		{"everything", cardForm("1", "", ""), []string{fieldNumber, fieldExp, fieldCVC}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, errs := parsePaymentForm(c.form).validate(formNow)
			if len(errs) != len(c.errors) {
				t.Fatalf("errors %v, want fields %v", errs, c.errors)
			}
			for _, f := range c.errors {
				if errs[f] == "" {
					t.Fatalf("no error on %s: %v", f, errs)
				}
			}
			if len(c.errors) == 0 {
				if in.Method != ports.MethodCard || in.Card == nil || len(in.Card.Number) != 16 || in.Card.ExpYear < 2026 {
					t.Fatalf("input %+v", in.Card)
				}
			}
		})
	}
}

func TestValidateSEPA(t *testing.T) {
	ok := url.Values{fieldMethod: {"sepa_debit"}, fieldIBAN: {"de89 3704 0044 0532 0130 00"}, fieldHolder: {"Ada Lovelace"}}
	in, errs := parsePaymentForm(ok).validate(formNow)
	if len(errs) != 0 || in.SEPA == nil || in.SEPA.IBAN != "DE89370400440532013000" {
		t.Fatalf("valid IBAN: %v %+v", errs, in)
	}
	bad := url.Values{fieldMethod: {"sepa_debit"}, fieldIBAN: {"DE89370400440532013001"}, fieldHolder: {"A"}}
	if _, errs := parsePaymentForm(bad).validate(formNow); errs[fieldIBAN] == "" || errs[fieldHolder] == "" {
		t.Fatalf("bad IBAN and holder: %v", errs)
	}
	if _, errs := parsePaymentForm(url.Values{fieldMethod: {"cash"}}).validate(formNow); errs[""] == "" {
		t.Fatalf("unknown method: %v", errs)
	}
}

func TestFieldOfParam(t *testing.T) {
	for param, want := range map[string]string{
		"card.number": fieldNumber, "card.exp_month": fieldExp, "card.exp_year": fieldExp,
		"card.cvc": fieldCVC, "sepa_debit.iban": fieldIBAN, "amount": "",
	} {
		if got := fieldOfParam(param); got != want {
			t.Errorf("fieldOfParam(%q) = %q, want %q", param, got, want)
		}
	}
}

// A page shown again with refused fields names them at the top, in the page's order.
func TestErrorSummary(t *testing.T) {
	cases := []struct {
		errs map[string]string
		want string
	}{
		{map[string]string{}, ""},
		{map[string]string{fieldCVC: "x"}, "Check the security code."},
		{map[string]string{fieldCVC: "x", fieldNumber: "y"}, "Check these fields: card number and security code."},
		{map[string]string{fieldExp: "x", fieldCVC: "x", fieldNumber: "y"}, "Check these fields: card number, expiry date and security code."},
	}
	for _, c := range cases {
		if got := errorSummary(c.errs); got != c.want {
			t.Errorf("errorSummary(%v) = %q, want %q", c.errs, got, c.want)
		}
	}
}
