package dashboardapi

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"strconv"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// PayoutSchedule tells the balance page whether payouts run in a scope and when the next one
// is due (modules/payouts).
type PayoutSchedule interface {
	// Schedule answers whether payouts run in scope, the next run when they do, and why not
	// when they do not.
	Schedule(ctx context.Context, scope core.Scope) (enabled bool, next *time.Time, message string, err error)
}

// errNoLedger answers a balance request on a server wired without the ledger.
var errNoLedger = errors.New("dashboard: the ledger is not wired")

// exportLimit bounds the rows of one CSV export.
const exportLimit = 100_000

// GetBalance reads the balance per currency (one row per currency and account) and the payout
// schedule.
func (a *dashboardAPI) GetBalance(ctx context.Context, r dash.GetBalanceRequestObject) (dash.GetBalanceResponseObject, error) {
	if a.d.Ledger == nil {
		return nil, errNoLedger
	}
	scope := kit.CallerFrom(ctx).Scope
	bs, err := a.d.Ledger.Balances(ctx, scope)
	if err != nil {
		return nil, err
	}
	out := dash.Balance{Object: "balance", Available: []dash.BalanceAmount{}, Pending: []dash.BalanceAmount{}}
	for _, b := range bs {
		out.Available = append(out.Available, dash.BalanceAmount{Amount: b.Available, Currency: string(b.Currency)})
		out.Pending = append(out.Pending, dash.BalanceAmount{Amount: b.Pending, Currency: string(b.Currency)})
	}
	msg := "Payouts are not set up on this server."
	if a.d.Payouts != nil {
		enabled, next, m, err := a.d.Payouts.Schedule(ctx, scope)
		if err != nil {
			return nil, err
		}
		out.Payouts.Enabled, msg = enabled, m
		if next != nil {
			at := next.Unix()
			out.Payouts.NextPayoutAt = &at
		}
	}
	if !out.Payouts.Enabled {
		out.Payouts.Message = &msg
	}
	return dash.GetBalance200JSONResponse{Body: out}, nil
}

func balanceFilter(typ, payout, source, payment *string) ledger.Filter {
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	return ledger.Filter{Type: ledger.Type(deref(typ)), PayoutID: deref(payout), SourceID: deref(source), PaymentID: deref(payment)}
}

// ListBalanceTransactions lists the environment's balance transactions.
func (a *dashboardAPI) ListBalanceTransactions(ctx context.Context, r dash.ListBalanceTransactionsRequestObject) (dash.ListBalanceTransactionsResponseObject, error) {
	if a.d.Ledger == nil {
		return nil, errNoLedger
	}
	p := r.Params
	page, err := a.d.Ledger.Transactions(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore),
		balanceFilter(p.Type, p.Payout, p.Source, p.Payment))
	if err != nil {
		return nil, err
	}
	out := dash.BalanceTransactionList{Object: wire.ListObjectList, HasMore: page.HasMore,
		Url: "/api/v1/" + string(r.Env) + "/balance_transactions", Data: make([]dash.BalanceTransaction, 0, len(page.Items))}
	for _, t := range page.Items {
		out.Data = append(out.Data, balanceTransactionOf(t))
	}
	return dash.ListBalanceTransactions200JSONResponse{Body: out}, nil
}

// ExportBalanceTransactions writes the filtered balance transactions as CSV, newest first.
func (a *dashboardAPI) ExportBalanceTransactions(ctx context.Context, r dash.ExportBalanceTransactionsRequestObject) (dash.ExportBalanceTransactionsResponseObject, error) {
	if a.d.Ledger == nil {
		return nil, errNoLedger
	}
	p := r.Params
	b, err := a.balanceCSV(ctx, kit.CallerFrom(ctx).Scope, balanceFilter(p.Type, p.Payout, p.Source, p.Payment))
	if err != nil {
		return nil, err
	}
	cd := `attachment; filename="balance_transactions.csv"`
	return dash.ExportBalanceTransactions200TextcsvResponse{Body: bytes.NewReader(b), ContentLength: int64(len(b)),
		Headers: dash.ExportBalanceTransactions200ResponseHeaders{ContentDisposition: &cd}}, nil
}

// balanceCSV renders the balance transactions f selects (at most exportLimit) as CSV.
func (a *dashboardAPI) balanceCSV(ctx context.Context, scope core.Scope, f ledger.Filter) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"id", "type", "amount", "fee", "net", "currency", "status", "available_on", "created", "source", "payment", "payout"})
	q := core.ListQuery{Limit: core.MaxListLimit}
	for n := 0; n < exportLimit; {
		page, err := a.d.Ledger.Transactions(ctx, scope, q, f)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Items {
			i := strconv.FormatInt
			_ = w.Write([]string{t.ID(), string(t.Type()), i(t.Amount(), 10), i(t.Fee(), 10), i(t.Net(), 10), string(t.Currency()),
				string(t.Status()), t.AvailableOn().UTC().Format(time.RFC3339), t.Created().UTC().Format(time.RFC3339),
				t.SourceID(), t.PaymentID(), t.PayoutID()})
			n++
		}
		if !page.HasMore || len(page.Items) == 0 {
			break
		}
		q.StartingAfter = page.Items[len(page.Items)-1].ID()
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// paymentBalanceTransactions lists the ledger entries of one payment for its detail.
func (a *dashboardAPI) paymentBalanceTransactions(ctx context.Context, scope core.Scope, paymentID string) ([]dash.BalanceTransaction, error) {
	out := []dash.BalanceTransaction{}
	if a.d.Ledger == nil {
		return out, nil
	}
	page, err := a.d.Ledger.Transactions(ctx, scope, core.ListQuery{Limit: core.MaxListLimit}, ledger.Filter{PaymentID: paymentID})
	if err != nil {
		return nil, err
	}
	for _, t := range page.Items {
		out = append(out, balanceTransactionOf(t))
	}
	return out, nil
}

func balanceTransactionOf(t *ledger.Transaction) dash.BalanceTransaction {
	out := dash.BalanceTransaction{Id: t.ID(), Object: "balance_transaction", Type: dash.BalanceTransactionType(t.Type()),
		Amount: t.Amount(), Fee: t.Fee(), Net: t.Net(), Currency: string(t.Currency()), Status: dash.BalanceTransactionStatus(t.Status()),
		AvailableOn: t.AvailableOn().Unix(), Created: t.Created().Unix(), Source: t.SourceID()}
	if p := t.PaymentID(); p != "" {
		out.Payment = &p
	}
	if p := t.PayoutID(); p != "" {
		out.Payout = &p
	}
	return out
}
