package checkoutweb

import (
	"errors"
	"net/http"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
)

// pay takes the payment form (POST /c/{id}/pay, the secret in the hidden field cs): the shape
// is checked first and every mistake shown next to its field; then the use case confirms, and
// its outcome decides the answer. Exactly one payment per session, whatever the number of
// posts, is the use case's guarantee: a second post after success meets session_expired.
func (h *Handler) pay(w http.ResponseWriter, r *http.Request, k pageKind) {
	if !h.readForm(w, r, k) {
		return
	}
	id, cs := r.PathValue("id"), r.PostForm.Get(fieldSecret)
	view, err := h.buyer.BuyerView(r.Context(), id, cs)
	if err != nil {
		h.fail(w, r, k, err)
		return
	}
	form := parsePaymentForm(r.PostForm)
	page := checkoutPage(k, view, cs)
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
	res, err := h.buyer.Confirm(r.Context(), id, cs, in)
	if err != nil {
		h.confirmFailed(w, r, k, page, err)
		return
	}
	h.outcome(w, r, k, view, res, cs)
}

// confirmFailed shows the checkout page again for a decline (402), a refused input (400, next
// to its field) or another refusal of the use case (its status and message); a used or
// expired secret and unexpected errors go to fail.
func (h *Handler) confirmFailed(w http.ResponseWriter, r *http.Request, k pageKind, page *page, err error) {
	var decline *checkout.DeclineError
	if errors.As(err, &decline) {
		page.FormError = declineMessage(decline)
		page.DeclineCode = decline.DeclineCode
		if f := fieldOfParam(decline.Param); f != "" {
			page.Errors[f] = page.FormError
		}
		h.render(w, r, http.StatusPaymentRequired, page)
		return
	}
	var de *core.Error
	if errors.As(err, &de) && !errors.Is(err, checkout.ErrSessionExpired) {
		// A refused input next to its field; anything else the use case refuses (too many
		// tries, a live merchant not ready) above the form, with the use case's words.
		if f := fieldOfParam(de.Param); f != "" && de.Type == core.TypeInvalidRequest {
			page.Errors[f] = de.Message
		} else {
			page.FormError = de.Message
		}
		h.render(w, r, kit.StatusOf(de), page)
		return
	}
	h.fail(w, r, k, err)
}

// outcome answers a confirmation that went through: 3-D Secure goes to the challenge;
// success and processing go to success_url (303, or from an embed a page that leaves the
// frame), or to a receipt page when the session has none.
func (h *Handler) outcome(w http.ResponseWriter, r *http.Request, k pageKind, view *checkout.BuyerView, res *checkout.ConfirmResult, cs string) {
	switch res.Status {
	case checkout.ConfirmRequiresAction:
		target := sessionPath(k, view.Session.ID(), "/3ds", cs)
		if res.Action != nil && res.Action.RedirectURL != "" {
			target = res.Action.RedirectURL // a live issuer's own challenge
		}
		seeOther(w, r, target)
		return
	case checkout.ConfirmSucceeded, checkout.ConfirmProcessing:
	default:
		h.fail(w, r, k, errors.New("confirm: unknown status "+string(res.Status)))
		return
	}
	s := res.Session
	if s == nil {
		s = view.Session
	}
	if u := s.SuccessURL(); u != nil && *u != "" {
		h.leave(w, r, k, *u, "Payment received", "Your payment went through. Continue to the shop.")
		return
	}
	h.render(w, r, http.StatusOK, receiptPage(k, view, s, res.Status))
}

// leave sends the buyer to url at the end of the session: a 303 on a top-level page; from an
// embed a small page whose link (and script) replaces the merchant's page, not the frame.
func (h *Handler) leave(w http.ResponseWriter, r *http.Request, k pageKind, url, heading, message string) {
	if k == pageEmbed {
		h.render(w, r, http.StatusOK, leavePage(url, heading, message))
		return
	}
	seeOther(w, r, url)
}
