package checkoutweb

import (
	"errors"
	"net/http"

	"github.com/kassa-pay/kassa/modules/checkout"
)

// The sandbox's 3-D Secure step (D6: card 4000002760003184): Kassa shows a simulated issuer
// challenge with "Complete" and "Fail"; either answer goes to the use case, which completes
// the payment or declines it with authentication_failed and leaves the session open.

// showChallenge renders the challenge of the pending charge: GET /c/{id}/3ds?cs=….
func (h *Handler) showChallenge(w http.ResponseWriter, r *http.Request, k pageKind) {
	id, cs := r.PathValue("id"), r.URL.Query().Get("cs")
	view, err := h.buyer.BuyerView(r.Context(), id, cs)
	if err != nil {
		h.fail(w, r, k, err)
		return
	}
	if view.Pending == nil {
		seeOther(w, r, sessionPath(k, id, "", cs))
		return
	}
	h.render(w, r, http.StatusOK, challengePage(k, view, cs))
}

// resolveChallenge takes the buyer's answer: POST /c/{id}/3ds, action=complete|fail.
func (h *Handler) resolveChallenge(w http.ResponseWriter, r *http.Request, k pageKind) {
	if !h.readForm(w, r, k) {
		return
	}
	id, cs := r.PathValue("id"), r.PostForm.Get(fieldSecret)
	view, err := h.buyer.BuyerView(r.Context(), id, cs)
	if err != nil {
		h.fail(w, r, k, err)
		return
	}
	action := r.PostForm.Get(fieldAction)
	if action != actionPass && action != actionFail {
		page := challengePage(k, view, cs)
		page.FormError = "Choose Complete or Fail."
		h.render(w, r, http.StatusBadRequest, page)
		return
	}
	res, err := h.buyer.ResolveAction(r.Context(), id, cs, action == actionPass)
	if errors.Is(err, checkout.ErrNoPendingAction) {
		// Answered already (another tab, a replayed post): back to the session's page.
		seeOther(w, r, sessionPath(k, id, "", cs))
		return
	}
	if err != nil {
		// A failed challenge is a decline: the checkout page again, with the reason.
		h.confirmFailed(w, r, k, checkoutPage(k, view, cs), err)
		return
	}
	h.outcome(w, r, k, view, res, cs)
}
