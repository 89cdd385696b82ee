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
 *   Kassa.retrieve({session, clientSecret})                  → Promise (the public view of the session;
 *       a subscription-mode session adds recurring: {amount, interval, interval_count,
 *       trial_period_days}, the terms to show: "7-day free trial, then 9.00 EUR every month")
 *   Kassa.checkoutUrl({session, clientSecret, embed})        → the hosted page (/c/… or /embed/…)
 *   Kassa.challengeUrl({session, clientSecret})              → the hosted 3-D Secure page
 *   Kassa.origin                                             → the checkout origin in use
 *
 * Call confirm once per buyer action: the server makes a session pay at most once anyway.
 *
 * Invoices: a sent invoice is paid by its public token (the last part of its
 * hosted_invoice_url, {checkout origin}/i/{token}); the token is the only credential.
 *
 *   Kassa.retrieveInvoice({invoice})                         → Promise (the public view of the invoice:
 *       number, merchant_name, status, currency, amount_due, line_items, due_date, …)
 *   Kassa.confirmInvoice({invoice, card: {number, exp_month, exp_year, cvc, name}})
 *   Kassa.confirmInvoice({invoice, sepa_debit: {iban, account_holder}})
 *     → Promise of {status: "succeeded" | "processing" | "requires_action", invoice, next_action}
 *       On "requires_action" (3-D Secure) send the customer to Kassa.invoiceUrl(...), where the
 *       hosted invoice page asks for it. Errors reject with a KassaError as confirm's do
 *       (402 card_declined leaves the invoice open; 422 invoice_not_open once it is paid or void).
 *   Kassa.invoiceUrl({invoice})                              → the hosted invoice page (/i/…)
 *   Kassa.invoicePdfUrl({invoice})                           → the invoice as a PDF (/i/…/pdf)
 *
 * Subscriptions: the first payment of a subscription your server created with the API is
 * confirmed by its client_secret (pi_…_secret_…, returned with the subscription); the part
 * before _secret_ is the payment's id, so the secret is all the page needs.
 *
 *   Kassa.retrievePaymentIntent({clientSecret})              → Promise (the first payment:
 *       status ("requires_payment_method" | "requires_action" | "processing" | "succeeded" |
 *       "canceled"), amount (charged now; 0 with a trial), recurring_amount, currency,
 *       trial_end, subscription_status, payment_method, next_action)
 *   Kassa.confirmPaymentIntent({clientSecret, card: {number, exp_month, exp_year, cvc, name}})
 *   Kassa.confirmPaymentIntent({clientSecret, sepa_debit: {iban, account_holder}})
 *     → Promise of the first payment, confirmed: {status: "succeeded", subscription_status:
 *       "trialing" | "active", payment_method: {type, brand, last4}, …}. With a trial nothing is
 *       charged: the card or bank account is saved for the renewals. Without a trial a SEPA
 *       debit answers {status: "processing", subscription_status: "incomplete"} until it settles
 *       (retrievePaymentIntent then reads "succeeded"): tell the customer the payment is on its
 *       way, do not ask again; confirming meanwhile is refused (422). A card that asks for 3-D
 *       Secure answers {status: "requires_action", next_action: {type: "three_d_secure",
 *       redirect_url}} as a session's confirm does: send the customer to
 *       next_action.redirect_url when one is given (a live issuer's page); in the sandbox
 *       (redirect_url null) show the simulated challenge's two choices and report the answer
 *       with resolvePaymentIntentAction. Errors reject with a KassaError as confirm's do (402
 *       card_declined leaves the subscription incomplete, the customer may try another card;
 *       422 payment_intent_unexpected_state once it is confirmed or expired).
 *   Kassa.resolvePaymentIntentAction({clientSecret, approve}) → Promise of the first payment as
 *       confirmPaymentIntent answers it: approved, the card is saved (and, without a trial, the
 *       first invoice charged, which may answer "requires_action" once more); refused, a
 *       KassaError 402 card_declined with decline_code authentication_failed.
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

  function request(method, url, auth, body) {
    var init = {
      method: method,
      headers: {},
      credentials: "omit",
      cache: "no-store",
      mode: "cors"
    };
    if (auth) { init.headers["Authorization"] = "Bearer " + auth; }
    if (body) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(url, init)
      .then(function (res) {
        return res.json().then(function (b) { return { status: res.status, body: b }; },
          function () { return { status: res.status, body: null }; });
      }, function () { throw new KassaError(0); })
      .then(function (r) {
        if (r.status >= 200 && r.status < 300 && r.body) { return r.body; }
        throw new KassaError(r.status, r.body && r.body.error);
      });
  }

  function call(method, o, path, body) {
    try { need(o, "session"); need(o, "clientSecret"); } catch (e) { return Promise.reject(e); }
    return request(method, origin + "/api/v1/checkout/sessions/" + encodeURIComponent(o.session) + path, o.clientSecret, body);
  }

  function invoiceCall(method, o, path, body) {
    try { need(o, "invoice"); } catch (e) { return Promise.reject(e); }
    return request(method, origin + "/api/v1/invoices/" + encodeURIComponent(o.invoice) + path, null, body);
  }

  // paymentIntentCall calls the first payment that the client secret pi_…_secret_… names.
  function paymentIntentCall(method, o, path, body) {
    var id;
    try {
      need(o, "clientSecret");
      id = o.clientSecret.split("_secret_")[0];
      if (id === o.clientSecret || id.indexOf("pi_") !== 0) {
        throw new KassaError(0, { type: "invalid_request", code: "client_secret_invalid", param: "clientSecret", message: "clientSecret is not the client secret of a payment (pi_…_secret_…)." });
      }
    } catch (e) { return Promise.reject(e); }
    return request(method, origin + "/api/v1/payment_intents/" + encodeURIComponent(id) + path, o.clientSecret, body);
  }

  // method is the confirm body of card or sepa_debit, or null when o has neither.
  function method(o) {
    if (o && o.card) { return { payment_method: "card", card: o.card }; }
    if (o && o.sepa_debit) { return { payment_method: "sepa_debit", sepa_debit: o.sepa_debit }; }
    return null;
  }

  function noMethod() {
    return Promise.reject(new KassaError(0, { type: "invalid_request", code: "parameter_missing", param: "card", message: "Give card or sepa_debit." }));
  }

  function pageUrl(o, kind, suffix) {
    need(o, "session"); need(o, "clientSecret");
    return origin + "/" + kind + "/" + encodeURIComponent(o.session) + suffix + "?cs=" + encodeURIComponent(o.clientSecret);
  }

  global.Kassa = {
    origin: origin,
    KassaError: KassaError,
    confirm: function (o) {
      var body = method(o);
      return body ? call("POST", o, "/confirm", body) : noMethod();
    },
    resolveAction: function (o) { return call("POST", o, "/action", { approve: !!(o && o.approve) }); },
    cancel: function (o) { return call("POST", o, "/cancel", {}); },
    retrieve: function (o) { return call("GET", o, "", null); },
    checkoutUrl: function (o) { return pageUrl(o, o && o.embed ? "embed" : "c", ""); },
    challengeUrl: function (o) { return pageUrl(o, "c", "/3ds"); },
    retrieveInvoice: function (o) { return invoiceCall("GET", o, "", null); },
    confirmInvoice: function (o) {
      var body = method(o);
      return body ? invoiceCall("POST", o, "/confirm", body) : noMethod();
    },
    invoiceUrl: function (o) { need(o, "invoice"); return origin + "/i/" + encodeURIComponent(o.invoice); },
    invoicePdfUrl: function (o) { need(o, "invoice"); return origin + "/i/" + encodeURIComponent(o.invoice) + "/pdf"; },
    retrievePaymentIntent: function (o) { return paymentIntentCall("GET", o, "", null); },
    confirmPaymentIntent: function (o) {
      var body = method(o);
      return body ? paymentIntentCall("POST", o, "/confirm", body) : noMethod();
    },
    resolvePaymentIntentAction: function (o) {
      return paymentIntentCall("POST", o, "/action", { approve: !!(o && o.approve) });
    }
  };
})(window);
