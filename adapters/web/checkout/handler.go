package checkoutweb

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
)

// Buyer is what the pages need of the checkout module: the buyer's use cases on
// *checkout.Service, each authorised by the session's client secret alone. Every one answers
// checkout.ErrSessionExpired for an unknown id, a wrong secret and a session that is no longer
// open, so the pages cannot tell those apart either.
type Buyer interface {
	BuyerView(ctx context.Context, sessionID, clientSecret string) (*checkout.BuyerView, error)
	Confirm(ctx context.Context, sessionID, clientSecret string, in checkout.ConfirmInput) (*checkout.ConfirmResult, error)
	ResolveAction(ctx context.Context, sessionID, clientSecret string, approve bool) (*checkout.ConfirmResult, error)
	CancelByBuyer(ctx context.Context, sessionID, clientSecret string) (*checkout.Session, error)
}

// Deps are the handler's collaborators.
type Deps struct {
	Log   *slog.Logger
	Buyer Buyer
	// Invoices serves the hosted invoice pages (/i/{token}); nil: they are not found.
	Invoices Invoices
	// Now is the time card expiry dates are checked against; time.Now when nil.
	Now func() time.Time
}

// Handler serves the hosted pages and their assets. Mount it for every path of the checkout
// listener except the browser API (/api/).
type Handler struct {
	log      *slog.Logger
	buyer    Buyer
	invoices Invoices
	now      func() time.Time
	mux      *http.ServeMux
}

// New builds the handler. It does not log requests; the listener's outer middleware does
// (without query strings, so the client secret in `?cs=` never reaches a log).
func New(d Deps) *Handler {
	h := &Handler{log: d.Log, buyer: d.Buyer, invoices: d.Invoices, now: d.Now, mux: http.NewServeMux()}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.now == nil {
		h.now = time.Now
	}
	for _, k := range []pageKind{pageTop, pageEmbed} {
		p := k.prefix()
		h.mux.HandleFunc("GET "+p+"/{id}", h.withKind(k, h.show))
		h.mux.HandleFunc("POST "+p+"/{id}/pay", h.withKind(k, h.pay))
		h.mux.HandleFunc("GET "+p+"/{id}/3ds", h.withKind(k, h.showChallenge))
		h.mux.HandleFunc("POST "+p+"/{id}/3ds", h.withKind(k, h.resolveChallenge))
		h.mux.HandleFunc("POST "+p+"/{id}/cancel", h.withKind(k, h.cancel))
	}
	h.mux.HandleFunc("GET /i/{token}", h.showInvoice)
	h.mux.HandleFunc("GET /i/{token}/pdf", h.invoicePDF)
	h.mux.HandleFunc("POST /i/{token}/pay", h.payInvoice)
	h.mux.HandleFunc("POST /i/{token}/3ds", h.resolveInvoiceChallenge)
	h.mux.HandleFunc("GET /assets/{name}", serveAsset)
	h.mux.HandleFunc("GET /js/kassa.js", serveKassaJS)
	h.mux.HandleFunc("/", h.notFound)
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	baseHeaders(w.Header())
	h.mux.ServeHTTP(w, r)
}

func (k pageKind) prefix() string {
	if k == pageEmbed {
		return "/embed"
	}
	return "/c"
}

type kindHandler func(w http.ResponseWriter, r *http.Request, k pageKind)

func (h *Handler) withKind(k pageKind, f kindHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { f(w, r, k) }
}

// show renders the checkout page of an open session: GET /c/{id}?cs=….
func (h *Handler) show(w http.ResponseWriter, r *http.Request, k pageKind) {
	id, cs := r.PathValue("id"), r.URL.Query().Get("cs")
	view, err := h.buyer.BuyerView(r.Context(), id, cs)
	if err != nil {
		h.fail(w, r, k, err)
		return
	}
	if view.Pending != nil {
		// A charge waits for 3-D Secure: the buyer finishes (or fails) it first.
		seeOther(w, r, sessionPath(k, id, "/3ds", cs))
		return
	}
	h.render(w, r, http.StatusOK, checkoutPage(k, view, cs))
}

// sessionPath is a page of the session; cs is added as the query when not empty.
func sessionPath(k pageKind, id, suffix, cs string) string {
	p := k.prefix() + "/" + id + suffix
	if cs != "" {
		p += "?cs=" + cs
	}
	return p
}

// fail renders the page for an error of a use case: the session_expired page (422) for a
// wrong, used or expired secret, an error page otherwise. Unexpected errors are logged with
// the request id only; the page shows nothing of them.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, k pageKind, err error) {
	if errors.Is(err, checkout.ErrSessionExpired) {
		h.render(w, r, http.StatusUnprocessableEntity, expiredPage(k))
		return
	}
	var de *core.Error
	if errors.As(err, &de) {
		h.render(w, r, kit.StatusOf(de), errorPage(k, "This payment cannot be taken", de.Message))
		return
	}
	h.log.ErrorContext(r.Context(), "checkout page failed", "request_id", kit.RequestID(r.Context()), "error", err.Error())
	h.render(w, r, http.StatusInternalServerError, errorPage(k, "Something went wrong",
		"We could not load this checkout. Please try again in a moment."))
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusNotFound, errorPage(pageTop, "Page not found", "There is no page at this address."))
}

// readForm parses a posted form of bounded size; false (with a 400 page written) when it
// cannot be read.
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request, k pageKind) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		h.render(w, r, http.StatusBadRequest, errorPage(k, "Something went wrong", "The form could not be read. Go back and try again."))
		return false
	}
	return true
}
