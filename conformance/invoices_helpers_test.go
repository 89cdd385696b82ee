package conformance

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

func init() { sectionTitles["D15"] = "invoices (dashboard) and the hosted invoice page" }

// freeLine is a free-form invoice line.
func freeLine(desc string, qty, unit int64, vat string) dash.DashboardInvoiceLine {
	return dash.DashboardInvoiceLine{Description: &desc, Quantity: &qty, UnitAmount: &unit, VatRate: &vat}
}

// newDraft creates a draft of o in EUR with lines ls (201 expected).
func newDraft(t *testing.T, o *DashOwner, ls ...dash.DashboardInvoiceLine) dash.Invoice {
	t.Helper()
	body := dash.DashboardInvoiceCreate{Currency: ptr("eur"), CustomerName: ptr("Ada Lovelace"),
		CustomerEmail: ptr("ada-" + strings.ToLower(o.ID[4:12]) + "@example.com"), LineItems: &ls}
	r, err := o.Client.CreateInvoiceWithResponse(context.Background(), dashTest, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON201 == nil {
		t.Fatalf("create invoice: %d %s", r.StatusCode(), r.Body)
	}
	return *r.JSON201
}

// sendInvoice sends draft id (200 expected).
func sendInvoice(t *testing.T, o *DashOwner, id string) dash.Invoice {
	t.Helper()
	r, err := o.Client.SendInvoiceWithResponse(context.Background(), dashTest, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil {
		t.Fatalf("send invoice: %d %s", r.StatusCode(), r.Body)
	}
	return *r.JSON200
}

// invoiceEvents returns the types of o's events about invoice id, oldest first.
func invoiceEvents(t *testing.T, c *api.ClientWithResponses, id string) []string {
	t.Helper()
	var out []string
	data := evtList(t, c, "", 100).Data
	for i := len(data) - 1; i >= 0; i-- {
		e := data[i]
		obj := e.Data.Object
		if oid, _ := obj["id"].(string); oid == id {
			out = append(out, e.Type)
			continue
		}
		if iid, _ := obj["invoice_id"].(string); iid == id {
			out = append(out, e.Type)
		}
	}
	return out
}

// hostedPost posts form to the hosted invoice page path (no redirects followed).
func hostedPost(t *testing.T, path string, form url.Values) (int, string, http.Header) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(target.CheckoutURL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func hostedGet(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(target.CheckoutURL + path) //nolint:noctx // a test
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func cardForm(number string) url.Values {
	return url.Values{"method": {"card"}, "card_number": {number}, "card_exp": {"12 / 34"}, "card_cvc": {"123"}, "card_name": {"Ada"}}
}

// ownerRaw is dashRaw signed in as o, with its CSRF token.
func ownerRaw(t *testing.T, o *DashOwner, method, path, body string, headers map[string]string) Raw {
	t.Helper()
	h := map[string]string{"X-CSRF-Token": o.CSRF}
	for k, v := range headers {
		h[k] = v
	}
	return dashRaw(t, method, path, o.sessionToken(t), body, h)
}

// createDashPrice creates a product with a price of 15.00 EUR (monthly when recurring) and
// returns the price's id.
func createDashPrice(t *testing.T, o *DashOwner, recurring bool) string {
	t.Helper()
	return createPriceOf(t, o, "eur", recurring)
}

// createDashPriceIn creates a product with a one-time price of 1500 in currency.
func createDashPriceIn(t *testing.T, o *DashOwner, currency string) string {
	t.Helper()
	return createPriceOf(t, o, currency, false)
}

func createPriceOf(t *testing.T, o *DashOwner, currency string, recurring bool) string {
	t.Helper()
	ctx := context.Background()
	pr, err := o.Client.CreateProductWithResponse(ctx, dashTest, dash.DashboardProductCreate{Name: "Notebook"})
	if err != nil || pr.JSON201 == nil {
		t.Fatalf("create product: %v", err)
	}
	in := dash.DashboardPriceCreate{UnitAmount: 1500, Currency: currency}
	if recurring {
		in.Recurring = &dash.RecurringParams{Interval: "month"}
	}
	cr, err := o.Client.CreatePriceWithResponse(ctx, dashTest, pr.JSON201.Id, in)
	if err != nil || cr.JSON201 == nil {
		t.Fatalf("create price: %v %s", err, cr.Body)
	}
	return cr.JSON201.Id
}

func core62() string { return strings.ToLower(time.Now().Format("150405.000000000")) }
