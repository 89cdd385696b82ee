package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// The App API's refunds, single products and issued invoices (interface 4.5, D11, D17): one
// shape in both environments, each with its scope, paged like every list, and an id of another
// merchant or of the other environment is 404.

// appListIDs reads one page of path with token and returns its ids and has_more.
func appListIDs(t *testing.T, token, path string) ([]string, bool) {
	t.Helper()
	r := appRaw(t, http.MethodGet, path, token)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var page struct {
		Object string `json:"object"`
		Data   []struct {
			ID string `json:"id"`
		}
		HasMore bool `json:"has_more"`
	}
	if err := json.Unmarshal(r.Body, &page); err != nil || page.Object != "list" {
		t.Fatalf("GET %s: %v %s", path, err, r.Body)
	}
	ids := make([]string, len(page.Data))
	for i, d := range page.Data {
		ids[i] = d.ID
	}
	return ids, page.HasMore
}

// appWantPaging checks the paging rules of the list at path, whose rows are ids, newest first
// (at least 3): limit 0 and 101 and a negative offset are 400; limit 1 and 100 answer; has_more
// is false exactly at the end; an offset past the end is an empty page.
func appWantPaging(t *testing.T, token, path string, ids []string) {
	t.Helper()
	n := len(ids)
	for _, bad := range []string{"limit=0", "limit=101", "offset=-1"} {
		wantAppError(t, appRaw(t, http.MethodGet, path+"?"+bad, token), 400, "invalid_request", strings.Split(bad, "=")[0])
	}
	got, more := appListIDs(t, token, path+"?limit=1")
	if len(got) != 1 || got[0] != ids[0] || !more {
		t.Fatalf("%s limit 1: %v more %v, want %s and more", path, got, more, ids[0])
	}
	got, more = appListIDs(t, token, path+"?limit=100")
	if strings.Join(got, ",") != strings.Join(ids, ",") || more {
		t.Fatalf("%s limit 100: %v more %v, want %v", path, got, more, ids)
	}
	got, more = appListIDs(t, token, path+"?limit=2&offset="+strconv.Itoa(n-2))
	if len(got) != 2 || got[1] != ids[n-1] || more {
		t.Fatalf("%s ending exactly at the end: %v more %v", path, got, more)
	}
	got, more = appListIDs(t, token, path+"?limit=2&offset="+strconv.Itoa(n-3))
	if len(got) != 2 || !more {
		t.Fatalf("%s one before the end: %v more %v", path, got, more)
	}
	got, more = appListIDs(t, token, path+"?offset="+strconv.Itoa(n))
	if len(got) != 0 || more {
		t.Fatalf("%s past the end: %v more %v", path, got, more)
	}
}

var (
	appDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	appTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)
)

func TestAppAPIRefundsProductsInvoices(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "4.5", "refunds, one product and invoices answer with their scope and 403 insufficient_scope naming it without", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		all := appInstall(t, m)
		only := appInstall(t, m, "merchant:read")
		for p, scope := range map[string]string{"/v1/refunds": "refunds:read", "/v1/products/prod_000000000000000000000000": "products:read",
			"/v1/invoices": "invoices:read", "/v1/invoices/in_000000000000000000000000": "invoices:read"} {
			wantAppError(t, appRaw(t, http.MethodGet, p, only.TestToken), 403, "insufficient_scope", scope)
			wantAppError(t, appRaw(t, http.MethodGet, p, only.LiveToken), 403, "insufficient_scope", scope)
			r := appRaw(t, http.MethodGet, p, all.TestToken)
			if strings.Contains(p, "_0000") {
				wantAppError(t, r, 404, "not_found", p[strings.LastIndex(p, "/")+1:])
			} else if r.Status != 200 {
				t.Fatalf("%s with %s: %d %s", p, scope, r.Status, r.Body)
			}
		}
	})

	harness.Rule(t, "D11", "refunds: one per refund, newest first, money lower case, ISO 8601 UTC; paged; the other environment's are not listed", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		i := appInstall(t, o.Merchant, "refunds:read")
		pay := csGet(t, o.Test, appPaidSession(t, o)).Payment.Id
		var ids []string // newest first
		for _, amount := range []int64{300, 400, 500} {
			ids = append([]string{refundOK(t, o, pay, ptr(amount)).Id}, ids...)
		}
		c := appClient(t, i.TestToken)
		r, err := c.ListRefundsWithResponse(ctx, nil)
		if err != nil || r.JSON200 == nil || len(r.JSON200.Data) != 3 {
			t.Fatalf("list: %v %s", err, r.Body)
		}
		first := r.JSON200.Data[0]
		if first.Id != ids[0] || first.Object != "refund" || first.Payment != pay || first.Amount != (appapi.Money{Amount: 500, Currency: "eur"}) ||
			first.Status != "succeeded" || first.Reason != "requested_by_customer" || first.FailureCode != nil ||
			!appTime.MatchString(first.Created.Format("2006-01-02T15:04:05Z07:00")) || !strings.Contains(string(r.Body), `"created":"`) {
			t.Fatalf("refund %s", r.Body)
		}
		appWantPaging(t, i.TestToken, "/v1/refunds", ids)
		if got, _ := appListIDs(t, i.LiveToken, "/v1/refunds"); len(got) != 0 {
			t.Fatalf("the live token lists sandbox refunds %v", got)
		}
	})

	harness.Rule(t, "D11", "one product by id, without prices; another merchant's id and the other environment's are 404", func(t *testing.T) {
		t.Parallel()
		m, other := newMerchant(t, false), newMerchant(t, false)
		i := appInstall(t, m, "products:read")
		p := catCreateProduct(t, m.Test, wire.ProductCreate{Name: "Notebook", Description: ptr("Dotted"), Metadata: &wire.Metadata{"sku": "NB"}})
		foreign := catCreateProduct(t, other.Test, wire.ProductCreate{Name: "Theirs"}).Id
		r, err := appClient(t, i.TestToken).GetProductWithResponse(ctx, p.Id)
		if err != nil || r.JSON200 == nil || r.JSON200.Id != p.Id || r.JSON200.Name != "Notebook" || r.JSON200.Description == nil ||
			r.JSON200.Metadata["sku"] != "NB" || !r.JSON200.Active || strings.Contains(string(r.Body), "price") {
			t.Fatalf("product: %v %s", err, r.Body)
		}
		wantAppError(t, appRaw(t, http.MethodGet, "/v1/products/"+foreign, i.TestToken), 404, "not_found", foreign)
		wantAppError(t, appRaw(t, http.MethodGet, "/v1/products/"+p.Id, i.LiveToken), 404, "not_found", p.Id)
	})

	harness.Rule(t, "D11", "invoices: issued ones only (no drafts), newest first, dates YYYY-MM-DD, money lower case; one by id; drafts, another merchant's and the other environment's ids are 404; paged", func(t *testing.T) {
		t.Parallel()
		o, other := newDashOwner(t), newDashOwner(t)
		i := appInstall(t, o.Merchant, "invoices:read")
		var ids []string // newest first
		for n := range 3 {
			inv := sendInvoice(t, o, newDraft(t, o, freeLine("Work "+strconv.Itoa(n), 2, 1000, "19")).Id)
			ids = append([]string{inv.Id}, ids...)
		}
		draft := newDraft(t, o, freeLine("Not sent", 1, 500, "19")).Id
		foreign := sendInvoice(t, other, newDraft(t, other, freeLine("Theirs", 1, 500, "19")).Id).Id
		c := appClient(t, i.TestToken)
		r, err := c.ListInvoicesWithResponse(ctx, nil)
		if err != nil || r.JSON200 == nil || len(r.JSON200.Data) != 3 {
			t.Fatalf("list: %v %s", err, r.Body)
		}
		inv := r.JSON200.Data[0]
		if inv.Id != ids[0] || inv.Object != "invoice" || inv.Status != "open" || inv.Number == nil ||
			inv.Total != (appapi.Money{Amount: 2380, Currency: "eur"}) || inv.AmountDue != (appapi.Money{Amount: 2380, Currency: "eur"}) ||
			inv.VatAmount.Amount != 380 || len(inv.LineItems) != 1 || inv.LineItems[0].UnitAmount != (appapi.Money{Amount: 1000, Currency: "eur"}) ||
			inv.LineItems[0].VatRate != "19" || inv.IssueDate == nil || inv.DueDate == nil {
			t.Fatalf("invoice %s", r.Body)
		}
		var raw struct {
			Data []map[string]any `json:"data"`
		}
		_ = json.Unmarshal(r.Body, &raw)
		if d, _ := raw.Data[0]["issue_date"].(string); !appDate.MatchString(d) {
			t.Fatalf("issue_date %v, want YYYY-MM-DD", raw.Data[0]["issue_date"])
		}
		if d, _ := raw.Data[0]["due_date"].(string); !appDate.MatchString(d) {
			t.Fatalf("due_date %v, want YYYY-MM-DD", raw.Data[0]["due_date"])
		}
		if c, _ := raw.Data[0]["created"].(string); !appTime.MatchString(c) {
			t.Fatalf("created %v, want ISO 8601 UTC", raw.Data[0]["created"])
		}
		g, err := c.GetInvoiceWithResponse(ctx, ids[1])
		if err != nil || g.JSON200 == nil || g.JSON200.Id != ids[1] {
			t.Fatalf("get: %v %s", err, g.Body)
		}
		for _, id := range []string{draft, foreign} {
			wantAppError(t, appRaw(t, http.MethodGet, "/v1/invoices/"+id, i.TestToken), 404, "not_found", id)
		}
		wantAppError(t, appRaw(t, http.MethodGet, "/v1/invoices/"+ids[0], i.LiveToken), 404, "not_found", ids[0])
		if got, _ := appListIDs(t, i.LiveToken, "/v1/invoices"); len(got) != 0 {
			t.Fatalf("the live token lists sandbox invoices %v", got)
		}
		appWantPaging(t, i.TestToken, "/v1/invoices", ids)
	})
}
