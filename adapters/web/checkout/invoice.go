package checkoutweb

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/web/invoicepdf"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/invoicing"
)

// Invoices is what the hosted invoice page needs of the invoicing module: the invoice of a
// public token, and paying it. The token alone authorises both.
type Invoices interface {
	Hosted(ctx context.Context, token string) (*invoicing.Hosted, error)
	Pay(ctx context.Context, token string, in invoicing.PayInput) (*invoicing.PayResult, error)
	ResolveAction(ctx context.Context, token string, approve bool) (*invoicing.PayResult, error)
}

// invoiceView is what the invoice page shows, formatted.
type invoiceView struct {
	Merchant, Number, Status, StatusClass string
	Customer, Email, Issued, Due          string
	Lines                                 []invoiceLine
	Subtotal, VAT, Total, AmountDue, Memo string
	// AppliedBalance is what the customer's balance did to the invoice (credit taken, shown
	// negative, or an amount owed added), set when the invoice met a balance; AmountPaid is
	// set once something was paid. Total + AppliedBalance − AmountPaid is AmountDue.
	AppliedBalance, AmountPaid string
	Notice                     string
	Payable                    bool
}

type invoiceLine struct {
	Description, Quantity, Unit, Rate, Amount string
}

var invoiceStatusText = map[invoicing.Status]string{
	invoicing.StatusOpen: "Due", invoicing.StatusUncollectible: "Due", invoicing.StatusPaid: "Paid",
	invoicing.StatusVoid: "Void", invoicing.StatusDraft: "Draft",
}

func invoicePage(h *invoicing.Hosted, token string) *page {
	inv, c := h.Invoice, h.Invoice.Currency()
	t := inv.Totals()
	v := &invoiceView{Merchant: h.Merchant.Name, Status: invoiceStatusText[inv.Status()], StatusClass: string(inv.Status()),
		Customer: inv.CustomerName(), Email: inv.CustomerEmail(), Subtotal: FormatMoney(t.Subtotal, c),
		VAT: FormatMoney(t.VAT, c), Total: FormatMoney(t.Total, c), AmountDue: FormatMoney(inv.AmountDue(), c),
		Payable: inv.Payable() && !inv.Processing()}
	if inv.TookBalance() {
		v.AppliedBalance = signedMoney(inv.AppliedBalance(), c)
	}
	if p := inv.AmountPaid(); p > 0 && inv.Status() != invoicing.StatusVoid {
		v.AmountPaid = FormatMoney(p, c)
	}
	if n := inv.Number(); n != nil {
		v.Number = *n
	}
	if d := inv.IssueDate(); d != nil {
		v.Issued = d.UTC().Format("2 January 2006")
	}
	if d := inv.DueDate(); d != nil {
		v.Due = d.UTC().Format("2 January 2006")
	}
	if m := inv.Memo(); m != nil {
		v.Memo = *m
	}
	for _, l := range inv.Lines() {
		v.Lines = append(v.Lines, invoiceLine{Description: l.Description, Quantity: formatInt(l.Quantity),
			Unit: FormatMoney(l.UnitAmount, c), Rate: l.VATRate.String() + "%", Amount: FormatMoney(l.Amount(), c)})
	}
	switch {
	case inv.Status() == invoicing.StatusPaid:
		v.Notice = "This invoice is paid. Thank you."
		if p := inv.PaidAt(); p != nil {
			v.Notice = "This invoice was paid on " + p.UTC().Format("2 January 2006") + ". Thank you."
		}
	case inv.Status() == invoicing.StatusVoid:
		v.Notice = "This invoice was voided. There is nothing to pay."
	case inv.Processing():
		v.Status, v.StatusClass = "Processing", "processing"
		v.Notice = "Your payment is processing. Your bank transfers the amount in the next few days."
	}
	// The title says the state first, so that the page shown after a payment (a redirect to
	// this page) announces its outcome: "Paid: Invoice … from …".
	title := "Invoice " + v.Number + " from " + v.Merchant
	switch {
	case inv.Status() == invoicing.StatusPaid:
		title = "Paid: " + title
	case inv.Status() == invoicing.StatusVoid:
		title = "Void: " + title
	case inv.Processing():
		title = "Payment processing: " + title
	}
	return &page{template: "invoice", kind: pageTop, Title: title,
		Base: "/i/" + token, Merchant: v.Merchant, Total: v.AmountDue, Test: inv.Scope().Env == core.EnvTest,
		SEPA: c == "EUR", Errors: fieldErrors{}, Invoice: v}
}

// signedMoney is FormatMoney with a minus sign before the currency sign ("−€7.50").
func signedMoney(amount int64, c core.Currency) string {
	if amount < 0 {
		return "−" + FormatMoney(-amount, c)
	}
	return FormatMoney(amount, c)
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

// showInvoice renders GET /i/{token}.
func (h *Handler) showInvoice(w http.ResponseWriter, r *http.Request) {
	hosted, ok := h.hosted(w, r)
	if !ok {
		return
	}
	p := invoicePage(hosted, r.PathValue("token"))
	if hosted.Invoice.Payable() && r.URL.Query().Get("step") == "3ds" {
		p.Invoice.Payable, p.Challenge = false, true
		p.Title = "Confirm your payment: " + p.Title
	}
	h.render(w, r, http.StatusOK, p)
}

func (h *Handler) hosted(w http.ResponseWriter, r *http.Request) (*invoicing.Hosted, bool) {
	if h.invoices == nil {
		h.notFound(w, r)
		return nil, false
	}
	hosted, err := h.invoices.Hosted(r.Context(), r.PathValue("token"))
	if err != nil {
		h.invoiceFailed(w, r, err)
		return nil, false
	}
	return hosted, true
}

// payInvoice takes the payment form: POST /i/{token}/pay.
func (h *Handler) payInvoice(w http.ResponseWriter, r *http.Request) {
	if !h.readForm(w, r, pageTop) {
		return
	}
	hosted, ok := h.hosted(w, r)
	if !ok {
		return
	}
	token := r.PathValue("token")
	form := parsePaymentForm(r.PostForm)
	page := invoicePage(hosted, token)
	page.keep(form)
	in, errs := form.validate(h.now())
	if len(errs) > 0 {
		page.Errors, page.FormError = errs, errs[""]
		if page.FormError == "" {
			page.FormError = errorSummary(errs)
		}
		h.render(w, r, http.StatusBadRequest, page)
		return
	}
	res, err := h.invoices.Pay(r.Context(), token, invoicing.PayInput{Method: in.Method, Card: in.Card, SEPA: in.SEPA})
	h.invoicePaid(w, r, token, page, res, err)
}

// resolveInvoiceChallenge takes the answer to 3-D Secure: POST /i/{token}/3ds.
func (h *Handler) resolveInvoiceChallenge(w http.ResponseWriter, r *http.Request) {
	if !h.readForm(w, r, pageTop) {
		return
	}
	hosted, ok := h.hosted(w, r)
	if !ok {
		return
	}
	token := r.PathValue("token")
	action := r.PostForm.Get(fieldAction)
	if action != actionPass && action != actionFail {
		seeOther(w, r, "/i/"+token+"?step=3ds")
		return
	}
	res, err := h.invoices.ResolveAction(r.Context(), token, action == actionPass)
	if errors.Is(err, invoicing.ErrNoPendingAction) {
		seeOther(w, r, "/i/"+token)
		return
	}
	h.invoicePaid(w, r, token, invoicePage(hosted, token), res, err)
}

// invoicePaid answers a payment: 3-D Secure goes to the challenge, success and processing to
// the invoice page (which now says so), a decline or a refused input back to the form.
func (h *Handler) invoicePaid(w http.ResponseWriter, r *http.Request, token string, page *page, res *invoicing.PayResult, err error) {
	if err != nil {
		var decline *invoicing.DeclineError
		if errors.As(err, &decline) {
			page.FormError = declineMessageOf(decline.DeclineCode, decline.Message)
			page.DeclineCode = decline.DeclineCode
			h.render(w, r, http.StatusPaymentRequired, page)
			return
		}
		var de *core.Error
		if errors.As(err, &de) && de.Type != core.TypeNotFound {
			if f := fieldOfParam(de.Param); f != "" && de.Type == core.TypeInvalidRequest {
				page.Errors[f] = de.Message
			}
			page.FormError = de.Message
			h.render(w, r, kit.StatusOf(de), page)
			return
		}
		h.invoiceFailed(w, r, err)
		return
	}
	if res.Status == invoicing.PayRequiresAction {
		target := "/i/" + token + "?step=3ds"
		if res.Action != nil && res.Action.RedirectURL != "" {
			target = res.Action.RedirectURL
		}
		seeOther(w, r, target)
		return
	}
	seeOther(w, r, "/i/"+token)
}

func (h *Handler) invoiceFailed(w http.ResponseWriter, r *http.Request, err error) {
	var de *core.Error
	if errors.As(err, &de) && de.Type == core.TypeNotFound {
		h.render(w, r, http.StatusNotFound, errorPage(pageTop, "Invoice not found", "There is no invoice at this address. Check the link in your e-mail."))
		return
	}
	h.fail(w, r, pageTop, err)
}

// invoicePDF serves the invoice as a PDF: GET /i/{token}/pdf.
func (h *Handler) invoicePDF(w http.ResponseWriter, r *http.Request) {
	hosted, ok := h.hosted(w, r)
	if !ok {
		return
	}
	b, err := invoicepdf.Render(hosted)
	if err != nil {
		h.invoiceFailed(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `inline; filename="`+invoicepdf.FileName(hosted.Invoice)+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b) //nolint:gosec // G705: a PDF the server rendered, served as application/pdf, never as HTML
}
