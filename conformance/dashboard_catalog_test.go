package conformance

import (
	"context"
	"net/http"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

func TestDashboardCatalog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "DASH", "products and prices created in the dashboard are the merchant API's, and archive as there", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		desc := "Everything included"
		pr, err := o.Client.CreateProductWithResponse(ctx, dashTest, dash.DashboardProductCreate{Name: "Gold plan", Description: &desc})
		if err != nil {
			t.Fatal(err)
		}
		p := pr.JSON201
		if p == nil || p.Name != "Gold plan" || !p.Active || p.Description == nil || *p.Description != desc {
			t.Fatalf("create product: %d %s", pr.StatusCode(), pr.Body)
		}
		def := true
		cr, err := o.Client.CreatePriceWithResponse(ctx, dashTest, p.Id, dash.DashboardPriceCreate{UnitAmount: 1900, Currency: "eur",
			Recurring: &dash.RecurringParams{Interval: "month"}, SetAsDefault: &def})
		if err != nil {
			t.Fatal(err)
		}
		price := cr.JSON201
		if price == nil || price.UnitAmount != 1900 || price.Currency != "EUR" || price.Product != p.Id || price.Recurring == nil {
			t.Fatalf("create price: %d %s", cr.StatusCode(), cr.Body)
		}
		// The merchant API sees the same product with its default price.
		got, err := o.Test.RetrieveProductWithResponse(ctx, p.Id)
		if err != nil {
			t.Fatal(err)
		}
		if got.JSON200 == nil || got.JSON200.DefaultPrice == nil || *got.JSON200.DefaultPrice != price.Id {
			t.Fatalf("merchant API product: %d %s", got.StatusCode(), got.Body)
		}
		// The dashboard reads it as one product too.
		one, err := o.Client.GetProductWithResponse(ctx, dashTest, p.Id)
		if err != nil {
			t.Fatal(err)
		}
		if one.JSON200 == nil || one.JSON200.Id != p.Id || one.JSON200.DefaultPrice == nil || *one.JSON200.DefaultPrice != price.Id {
			t.Fatalf("dashboard product: %d %s", one.StatusCode(), one.Body)
		}
		lp, err := o.Client.ListPricesWithResponse(ctx, dashTest, p.Id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if lp.JSON200 == nil || len(lp.JSON200.Data) != 1 || lp.JSON200.Data[0].Id != price.Id {
			t.Fatalf("prices: %d %s", lp.StatusCode(), lp.Body)
		}
		ap, err := o.Client.ArchivePriceWithResponse(ctx, dashTest, price.Id)
		if err != nil {
			t.Fatal(err)
		}
		if ap.JSON200 == nil || ap.JSON200.Active {
			t.Fatalf("archive price: %d %s", ap.StatusCode(), ap.Body)
		}
		ar, err := o.Client.ArchiveProductWithResponse(ctx, dashTest, p.Id)
		if err != nil {
			t.Fatal(err)
		}
		if ar.JSON200 == nil || ar.JSON200.Active {
			t.Fatalf("archive product: %d %s", ar.StatusCode(), ar.Body)
		}
		active := false
		ls, err := o.Client.ListProductsWithResponse(ctx, dashTest, &dash.ListProductsParams{Active: &active})
		if err != nil {
			t.Fatal(err)
		}
		if ls.JSON200 == nil || len(ls.JSON200.Data) != 1 || ls.JSON200.Data[0].Id != p.Id {
			t.Fatalf("archived products: %d %s", ls.StatusCode(), ls.Body)
		}
		live, err := o.Client.ListProductsWithResponse(ctx, dashLive, nil)
		if err != nil || live.JSON200 == nil || len(live.JSON200.Data) != 0 {
			t.Fatalf("live products show test data: %v %s", err, live.Body)
		}
	})

	harness.Rule(t, "DASH", "dashboard catalog writes give the merchant API's validation errors", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		tok := o.sessionToken(t)
		h := map[string]string{"X-CSRF-Token": o.CSRF}
		r := dashRaw(t, http.MethodPost, "/api/v1/test/products", tok, `{"description":"no name"}`, h)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "parameter_missing", "name")
		r = dashRaw(t, http.MethodPost, "/api/v1/test/products", tok, `{"name":"x","colour":"red"}`, h)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "parameter_unknown", "colour")
		pr, err := o.Client.CreateProductWithResponse(ctx, dashTest, dash.DashboardProductCreate{Name: "Widget"})
		if err != nil || pr.JSON201 == nil {
			t.Fatalf("create product: %v", err)
		}
		id := pr.JSON201.Id
		r = dashRaw(t, http.MethodPost, "/api/v1/test/products/"+id+"/prices", tok, `{"unit_amount":100,"currency":"eur"}`, h)
		wantError(t, r.Status, r.Header, r.Body, 400, "amount_too_small", "amount_below_minimum", "unit_amount")
		r = dashRaw(t, http.MethodPost, "/api/v1/test/products/"+id+"/prices", tok, `{"unit_amount":1000,"currency":"xyz"}`, h)
		wantError(t, r.Status, r.Header, r.Body, 400, "currency_unsupported", "currency_unsupported", "currency")
		r = dashRaw(t, http.MethodPost, "/api/v1/test/products/"+id+"/prices", tok, `{"unit_amount":1000,"currency":"eur","recurring":{"interval":"month","interval_count":13}}`, h)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "interval_count_invalid", "recurring.interval_count")
	})

	harness.Rule(t, "ISO", "another merchant's or the other environment's product and price ids are 404 in the dashboard", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		other := newDashOwner(t)
		pr, err := other.Client.CreateProductWithResponse(ctx, dashTest, dash.DashboardProductCreate{Name: "Theirs"})
		if err != nil || pr.JSON201 == nil {
			t.Fatalf("create: %v", err)
		}
		cr, err := other.Client.CreatePriceWithResponse(ctx, dashTest, pr.JSON201.Id, dash.DashboardPriceCreate{UnitAmount: 500, Currency: "eur"})
		if err != nil || cr.JSON201 == nil {
			t.Fatalf("create price: %v", err)
		}
		for _, c := range []struct {
			who *DashOwner
			env dash.DashboardEnvironment
		}{{o, dashTest}, {other, dashLive}} {
			a, err := c.who.Client.ArchiveProductWithResponse(ctx, c.env, pr.JSON201.Id)
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, a, a.HTTPResponse, a.Body, 404, "not_found", "product_not_found", "id")
			g, err := c.who.Client.GetProductWithResponse(ctx, c.env, pr.JSON201.Id)
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, g, g.HTTPResponse, g.Body, 404, "not_found", "product_not_found", "id")
			l, err := c.who.Client.ListPricesWithResponse(ctx, c.env, pr.JSON201.Id, nil)
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, l, l.HTTPResponse, l.Body, 404, "not_found", "product_not_found", "id")
			p, err := c.who.Client.ArchivePriceWithResponse(ctx, c.env, cr.JSON201.Id)
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, p, p.HTTPResponse, p.Body, 404, "not_found", "price_not_found", "id")
		}
		// Untouched.
		got, err := other.Test.RetrieveProductWithResponse(ctx, pr.JSON201.Id)
		if err != nil || got.JSON200 == nil || !got.JSON200.Active {
			t.Fatalf("the product changed: %v %s", err, got.Body)
		}
	})
}
