package email_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/email"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var receiptDate = time.Date(2026, time.March, 15, 13, 4, 5, 0, time.FixedZone("CET", 3600))

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func TestReceiptGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		r    email.Receipt
	}{
		{"card_eur", email.Receipt{MerchantName: "Acme Coffee", Amount: 1050, Currency: "EUR", Reference: "order-1001",
			PaymentID: "py_4eC39HqLyjWDarjtT1zdp7dc", CardBrand: core.BrandVisa, CardLast4: "4242", Date: receiptDate}},
		{"card_jpy", email.Receipt{MerchantName: "Tokyo Books", Amount: 500, Currency: "JPY",
			CardBrand: core.BrandMastercard, CardLast4: "4444", Date: receiptDate}},
		{"sepa_escaped", email.Receipt{MerchantName: `<script>alert("x")</script> & Co`, Amount: 250, Currency: "eur",
			Reference: `<b>ref</b> "quoted" 'single'`, IBANLast4: "3000", Date: receiptDate}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, err := email.RenderReceipt(c.r)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "receipt_"+c.name+".subject.txt", out.Subject+"\n")
			golden(t, "receipt_"+c.name+".txt", out.Text)
			golden(t, "receipt_"+c.name+".html", out.HTML)
		})
	}
}

func TestReceiptContent(t *testing.T) {
	t.Parallel()
	out, err := email.RenderReceipt(email.Receipt{MerchantName: "Acme Coffee", Amount: 1050, Currency: "EUR",
		Reference: "order-1001", CardBrand: core.BrandVisa, CardLast4: "4242", Date: receiptDate})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{out.Text, out.HTML} {
		for _, want := range []string{"Acme Coffee", "10.50 EUR", "order-1001", "Visa •••• 4242", "15 March 2026, 12:04 UTC"} {
			if !strings.Contains(body, want) {
				t.Errorf("body lacks %q:\n%s", want, body)
			}
		}
	}
	if out.Subject != "Your receipt from Acme Coffee" {
		t.Errorf("Subject = %q", out.Subject)
	}

	jpy, err := email.RenderReceipt(email.Receipt{MerchantName: "Tokyo Books", Amount: 500, Currency: "JPY", Date: receiptDate})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(jpy.Text, "Amount paid: 500 JPY\n") || strings.Contains(jpy.Text, "5.00") {
		t.Errorf("zero-decimal amount wrong:\n%s", jpy.Text)
	}
	if strings.Contains(jpy.Text, "Payment method") || strings.Contains(jpy.Text, "Reference") {
		t.Errorf("empty optional lines shown:\n%s", jpy.Text)
	}
}

func TestReceiptEscapesMerchantStrings(t *testing.T) {
	t.Parallel()
	out, err := email.RenderReceipt(email.Receipt{MerchantName: `<img src=x onerror=alert(1)> & "Co"`, Amount: 999,
		Currency: "USD", Reference: "<script>x</script>", Date: receiptDate})
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"<img", "<script>", `& "Co"`} {
		if strings.Contains(out.HTML, raw) {
			t.Errorf("HTML contains unescaped %q:\n%s", raw, out.HTML)
		}
	}
	if !strings.Contains(out.HTML, "&lt;img src=x onerror=alert(1)&gt; &amp; &#34;Co&#34;") {
		t.Errorf("HTML lacks the escaped merchant name:\n%s", out.HTML)
	}
	if !strings.Contains(out.Text, `<img src=x onerror=alert(1)> & "Co"`) {
		t.Errorf("plain text should carry the name as typed:\n%s", out.Text)
	}
}

func TestReceiptSubjectIsOneLine(t *testing.T) {
	t.Parallel()
	out, err := email.RenderReceipt(email.Receipt{MerchantName: "Evil\r\nBcc: victim@example.com", Amount: 1000,
		Currency: "EUR", Date: receiptDate})
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.Subject, "\r\n") || out.Subject != "Your receipt from Evil Bcc: victim@example.com" {
		t.Errorf("Subject = %q", out.Subject)
	}
}

func TestReceiptRejectsBadData(t *testing.T) {
	t.Parallel()
	ok := email.Receipt{MerchantName: "Shop", Amount: 1000, Currency: "EUR", Date: receiptDate}
	bad := map[string]func(r *email.Receipt){
		"full card number": func(r *email.Receipt) { r.CardBrand, r.CardLast4 = core.BrandVisa, "4242424242424242" },
		"five digits":      func(r *email.Receipt) { r.CardLast4 = "24242" },
		"letters in last4": func(r *email.Receipt) { r.CardLast4 = "42a2" },
		"full IBAN":        func(r *email.Receipt) { r.IBANLast4 = "DE89370400440532013000" },
		"card and IBAN":    func(r *email.Receipt) { r.CardLast4, r.IBANLast4 = "4242", "3000" },
		"no merchant":      func(r *email.Receipt) { r.MerchantName = " \n " },
		"bad currency":     func(r *email.Receipt) { r.Currency = "XXX" },
		"no date":          func(r *email.Receipt) { r.Date = time.Time{} },
	}
	for name, mutate := range bad {
		r := ok
		mutate(&r)
		_, err := email.RenderReceipt(r)
		if !errors.Is(err, email.ErrReceiptInvalid) || !ports.IsPermanent(err) {
			t.Errorf("%s: err = %v, want ErrReceiptInvalid (permanent)", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "4242424242424242") {
			t.Errorf("%s: error repeats the card number", name)
		}
	}
}

func TestReceiptMessage(t *testing.T) {
	t.Parallel()
	m, err := email.ReceiptMessage(testScope, "buyer@example.com", email.Receipt{MerchantName: "Shop", Amount: 1000,
		Currency: "EUR", PaymentID: "py_1", CardBrand: core.BrandAmex, CardLast4: "0005", Date: receiptDate})
	if err != nil {
		t.Fatal(err)
	}
	if m.To != "buyer@example.com" || m.Scope != testScope || m.Headers["X-Kassa-Payment"] != "py_1" ||
		!strings.Contains(m.Text, "American Express •••• 0005") || m.HTML == "" {
		t.Errorf("message = %+v", m)
	}
	if _, err := email.ReceiptMessage(testScope, "not-an-address", email.Receipt{MerchantName: "Shop", Amount: 1000,
		Currency: "EUR", Date: receiptDate}); !ports.IsPermanent(err) {
		t.Errorf("bad recipient: err = %v, want permanent", err)
	}
}
