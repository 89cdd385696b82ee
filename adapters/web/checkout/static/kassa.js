/*! kassa.js: confirm a Kassa checkout session from your own page.
 *
 * Include it from your Kassa checkout origin (the base of the session's checkout_url):
 *
 *   <script src="https://checkout.example.com/js/kassa.js"></script>
 *
 * Your server creates the session with its secret API key and hands the page only the session
 * id and its client_secret (never the API key). The script calls the browser API of the
 * checkout origin cross-origin (CORS), authorised by the client secret alone.
 *
 *   Kassa.confirm({session, clientSecret, card: {number, exp_month, exp_year, cvc, name}})
 *   Kassa.confirm({session, clientSecret, sepa_debit: {iban, account_holder}})
 *     → Promise of the browser API's answer:
 *       {status: "succeeded" | "processing" | "requires_action", session, next_action, redirect_url}
 *       On "requires_action" (3-D Secure) send the buyer to Kassa.challengeUrl(...) (or to
 *       next_action.redirect_url when one is given); on the other two, to redirect_url if set.
 *     The promise is rejected with a KassaError for an error answer: .status (HTTP), .type,
 *     .code, .param, .decline_code (402 card_declined), .message (fit for the buyer). A
 *     decline leaves the session open: the buyer may try again.
 *   Kassa.resolveAction({session, clientSecret, approve})   → Promise (answer a 3-D Secure step)
 *   Kassa.cancel({session, clientSecret})                    → Promise ({redirect_url, session})
 *   Kassa.retrieve({session, clientSecret})                  → Promise (the public view of the session)
 *   Kassa.checkoutUrl({session, clientSecret, embed})        → the hosted page (/c/… or /embed/…)
 *   Kassa.challengeUrl({session, clientSecret})              → the hosted 3-D Secure page
 *   Kassa.origin                                             → the checkout origin in use
 *
 * Call confirm once per buyer action: the server makes a session pay at most once anyway.
 */
(function (global) {
  "use strict";

  var script = document.currentScript;
  var origin = script && script.src ? new URL(script.src).origin : global.location.origin;

  function KassaError(status, e) {
    e = e || {};
    this.name = "KassaError";
    this.status = status;
    this.type = e.type || "api_error";
    this.code = e.code || "";
    this.param = e.param || null;
    this.decline_code = e.decline_code || null;
    this.message = e.message || "The payment service could not be reached.";
  }
  KassaError.prototype = Object.create(Error.prototype);
  KassaError.prototype.constructor = KassaError;

  function need(o, key) {
    if (!o || typeof o[key] !== "string" || !o[key]) {
      throw new KassaError(0, { type: "invalid_request", code: "parameter_missing", param: key, message: key + " is required." });
    }
  }

  function call(method, o, path, body) {
    try { need(o, "session"); need(o, "clientSecret"); } catch (e) { return Promise.reject(e); }
    var init = {
      method: method,
      headers: { "Authorization": "Bearer " + o.clientSecret },
      credentials: "omit",
      cache: "no-store",
      mode: "cors"
    };
    if (body) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(origin + "/api/v1/checkout/sessions/" + encodeURIComponent(o.session) + path, init)
      .then(function (res) {
        return res.json().then(function (b) { return { status: res.status, body: b }; },
          function () { return { status: res.status, body: null }; });
      }, function () { throw new KassaError(0); })
      .then(function (r) {
        if (r.status >= 200 && r.status < 300 && r.body) { return r.body; }
        throw new KassaError(r.status, r.body && r.body.error);
      });
  }

  function pageUrl(o, kind, suffix) {
    need(o, "session"); need(o, "clientSecret");
    return origin + "/" + kind + "/" + encodeURIComponent(o.session) + suffix + "?cs=" + encodeURIComponent(o.clientSecret);
  }

  global.Kassa = {
    origin: origin,
    KassaError: KassaError,
    confirm: function (o) {
      var body;
      if (o && o.card) {
        body = { payment_method: "card", card: o.card };
      } else if (o && o.sepa_debit) {
        body = { payment_method: "sepa_debit", sepa_debit: o.sepa_debit };
      } else {
        return Promise.reject(new KassaError(0, { type: "invalid_request", code: "parameter_missing", param: "card", message: "Give card or sepa_debit." }));
      }
      return call("POST", o, "/confirm", body);
    },
    resolveAction: function (o) { return call("POST", o, "/action", { approve: !!(o && o.approve) }); },
    cancel: function (o) { return call("POST", o, "/cancel", {}); },
    retrieve: function (o) { return call("GET", o, "", null); },
    checkoutUrl: function (o) { return pageUrl(o, o && o.embed ? "embed" : "c", ""); },
    challengeUrl: function (o) { return pageUrl(o, "c", "/3ds"); }
  };
})(window);
