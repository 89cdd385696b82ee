package checkoutweb

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strings"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/ports"
)

//go:embed templates/*.html
var templateFS embed.FS

// Every page is the layout plus one content template; each is parsed once, at start.
var pages = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range []string{"checkout", "challenge", "outcome", "leave", "message", "invoice"} {
		out[name] = template.Must(template.New("layout.html").ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}()

// page is everything a template sees, already formatted. Secret is the client secret: it is
// written only into hidden fields and the data attributes checkout.js reads, on pages that are
// never cached.
type page struct {
	template string
	kind     pageKind
	// formTargets are the origins a form of the page may end at (success_url, cancel_url).
	formTargets []string

	Title       string
	Embed       bool
	ID, Secret  string
	Base        string // "/c/{id}" or "/embed/{id}"
	Merchant    string
	Description string
	Items       []lineItem
	Total       string
	// Trial and Recurring are a subscription session's terms ("7-day free trial", "then
	// €9.00 every month"); empty for a one-off payment.
	Trial, Recurring string
	Test             bool
	SEPA             bool // SEPA Direct Debit is offered (EUR sessions only)

	Errors      fieldErrors
	FormError   string
	DeclineCode string
	Values      paymentForm // only Name, Exp, Holder and Method are ever set
	SEPAFirst   bool

	// Invoice is the hosted invoice page's content; Challenge shows its 3-D Secure step.
	Invoice   *invoiceView
	Challenge bool

	Heading, Message string
	ContinueURL      string
	Receipt          *receipt
}

type lineItem struct {
	Name     string
	Quantity int
	Amount   string
	Image    string
}

type receipt struct {
	Amount, Merchant, Reference, Method, Status string
}

// keep writes back what the buyer may see again after an error: never the card number, the
// security code or the IBAN.
func (p *page) keep(f paymentForm) {
	p.Values = paymentForm{Method: f.Method, Name: f.Name, Exp: f.Exp, Holder: f.Holder}
	p.SEPAFirst = f.Method == ports.MethodSEPADebit
}

func sessionBase(k pageKind, s *checkout.Session) (string, []string) {
	var targets []string
	for _, u := range []*string{s.SuccessURL(), s.CancelURL()} {
		if u != nil {
			targets = append(targets, *u)
		}
	}
	return k.prefix() + "/" + s.ID(), targets
}

// summary fills what every page of an open session shows: merchant, description, items,
// total, test banner.
func summary(k pageKind, view *checkout.BuyerView, cs string) *page {
	s := view.Session
	base, targets := sessionBase(k, s)
	p := &page{
		kind: k, formTargets: targets, Embed: k == pageEmbed, ID: s.ID(), Secret: cs, Base: base,
		Merchant: view.MerchantName, Total: FormatMoney(s.Amount(), s.Currency()),
		Test: s.Environment() == core.EnvTest, SEPA: s.Currency() == "EUR", Errors: fieldErrors{},
	}
	if d := s.Description(); d != nil {
		p.Description = *d
	}
	p.Trial, p.Recurring = recurringTerms(view.Recurring, s.Amount(), s.Currency())
	if p.Trial != "" {
		p.Total = FormatMoney(0, s.Currency()) // the trial charges nothing today
	}
	for _, it := range s.LineItems() {
		li := lineItem{Name: it.Name, Quantity: it.Quantity}
		if it.Amount != nil {
			li.Amount = FormatMoney(*it.Amount, s.Currency())
		}
		if it.ImageURL != nil && strings.HasPrefix(*it.ImageURL, "https://") {
			li.Image = *it.ImageURL // the CSP allows https: images only
		}
		p.Items = append(p.Items, li)
	}
	return p
}

func checkoutPage(k pageKind, view *checkout.BuyerView, cs string) *page {
	p := summary(k, view, cs)
	p.template, p.Title = "checkout", "Pay "+view.MerchantName
	return p
}

func challengePage(k pageKind, view *checkout.BuyerView, cs string) *page {
	p := summary(k, view, cs)
	p.template, p.Title = "challenge", "Confirm your payment"
	return p
}

func receiptPage(k pageKind, view *checkout.BuyerView, s *checkout.Session, st checkout.ConfirmStatus) *page {
	p := &page{template: "outcome", kind: k, Embed: k == pageEmbed, Title: "Payment received",
		Heading: "Thank you, your payment was received.", Merchant: view.MerchantName}
	rc := &receipt{Amount: FormatMoney(s.Amount(), s.Currency()), Merchant: view.MerchantName, Status: "Paid"}
	if st == checkout.ConfirmProcessing {
		p.Title, p.Heading = "Payment processing", "Thank you, your payment is processing."
		p.Message = "Your bank transfers the amount in the next few days; you will receive a confirmation by e-mail."
		rc.Status = "Processing"
	}
	if ref := s.Reference(); ref != nil {
		rc.Reference = *ref
	}
	if pay := s.Payment(); pay != nil {
		if c := pay.Card(); c != nil && c.Last4 != "" {
			rc.Method = core.BrandName(c.Brand) + " •••• " + c.Last4
		} else if pay.PaymentMethod() == "sepa_debit" {
			rc.Method = "SEPA Direct Debit"
		}
	}
	p.Receipt = rc
	return p
}

func canceledPage(k pageKind) *page {
	return &page{template: "outcome", kind: k, Embed: k == pageEmbed, Title: "Payment canceled",
		Heading: "You canceled the payment.", Message: "Nothing was charged. You can close this page."}
}

// leavePage ends an embedded checkout: its link (and checkout.js) open url in the merchant's
// window, out of the frame. The page is framed, hence pageEmbed.
func leavePage(url, heading, message string) *page {
	return &page{template: "leave", kind: pageEmbed, Embed: true, Title: heading, Heading: heading,
		Message: message, ContinueURL: url, formTargets: []string{url}}
}

// expiredPage is the session_expired page (D6, 422): it says the same for a wrong, a used and
// an expired secret, so it reveals nothing about the session.
func expiredPage(k pageKind) *page {
	return &page{template: "message", kind: k, Embed: k == pageEmbed, Title: "Checkout link expired",
		Heading: "This checkout link is no longer valid.",
		Message: "It has expired, was canceled, or the payment is already complete. Ask the shop for a new link."}
}

func errorPage(k pageKind, heading, message string) *page {
	return &page{template: "message", kind: k, Embed: k == pageEmbed, Title: heading, Heading: heading, Message: message}
}

// render writes p with its headers: rendered to a buffer first, so a template error is an
// opaque 500 and never half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, p *page) {
	if p.FormError != "" || len(p.Errors) > 0 {
		// A page shown again with errors says so in its title, the first thing a screen reader
		// announces after the reload.
		p.Title = "Error: " + p.Title
	}
	var buf bytes.Buffer
	if err := pages[p.template].Execute(&buf, p); err != nil {
		h.log.ErrorContext(r.Context(), "checkout page template", "request_id", kit.RequestID(r.Context()),
			"template", p.template, "error", err.Error())
		pageHeaders(w.Header(), p.kind)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("<!doctype html><title>Error</title><p>Something went wrong.</p>"))
		return
	}
	pageHeaders(w.Header(), p.kind, p.formTargets...)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
