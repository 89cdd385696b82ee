package checkoutweb

import "net/http"

// cancel is the buyer's "Cancel" (D6): POST /c/{id}/cancel ends the session as canceled and
// sends the buyer to cancel_url, or shows a canceled page when the session has none.
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request, k pageKind) {
	if !h.readForm(w, r, k) {
		return
	}
	id, cs := r.PathValue("id"), r.PostForm.Get(fieldSecret)
	s, err := h.buyer.CancelByBuyer(r.Context(), id, cs)
	if err != nil {
		h.fail(w, r, k, err)
		return
	}
	if u := s.CancelURL(); u != nil && *u != "" {
		h.leave(w, r, k, *u, "Payment canceled", "You canceled the payment. Return to the shop.")
		return
	}
	h.render(w, r, http.StatusOK, canceledPage(k))
}
