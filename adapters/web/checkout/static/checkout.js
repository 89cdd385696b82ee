/* Kassa hosted checkout: progressive enhancement of the server-rendered pages.
 *
 * Without this script every page works through plain form posts. With it: the card and IBAN
 * inputs are checked as the buyer types (the same checks and messages as the server), the
 * payment is confirmed through the browser API (/api/v1/checkout/sessions/{id}/confirm,
 * authorised by the client secret) without a reload, a decline is shown in place, 3-D Secure
 * goes to its challenge page, and the end of the session leaves an embedded frame for the
 * merchant's window. A button is disabled while its request is in flight, so a double click
 * sends one request. When the browser API cannot be reached the form is posted as usual.
 */
(function () {
  "use strict";

  var MSG = {
    number: "Your card number is invalid. Check the digits and try again.",
    exp: "Enter the expiry date as MM / YY.",
    expired: "Your card has expired.",
    cvc: "Enter the 3 or 4 digit security code.",
    iban: "Your IBAN is invalid. Check it and try again.",
    holder: "Enter the name of the account holder.",
    failed: "We could not reach the payment service. Try again in a moment."
  };
  var DECLINES = {
    generic_decline: "Your card was declined. Try another card.",
    insufficient_funds: "Your card has insufficient funds. Try another card.",
    lost_card: "Your card was declined. Try another card.",
    expired_card: "Your card has expired. Try another card.",
    incorrect_cvc: "Your card's security code is incorrect.",
    incorrect_number: "Your card number is incorrect.",
    invalid_expiry_month: "Your card's expiry month is invalid.",
    invalid_expiry_year: "Your card's expiry year is invalid.",
    invalid_cvc: "Your card's security code is invalid.",
    authentication_failed: "We could not authenticate your payment. Try again or use another card.",
    authentication_required: "Your bank asks for authentication. Try again.",
    invalid_iban: "Your IBAN was refused by the bank. Check it and try again."
  };
  var PARAMS = {
    "card.number": "card_number", "card.exp_month": "card_exp", "card.exp_year": "card_exp",
    "card.cvc": "card_cvc", "card.name": "card_name", "sepa_debit.iban": "iban",
    "sepa_debit.account_holder": "account_holder"
  };

  function $(id) { return document.getElementById(id); }
  function digits(s) { return s.replace(/\D/g, ""); }

  function luhn(n) {
    var sum = 0, dbl = false;
    for (var i = n.length - 1; i >= 0; i--) {
      var d = n.charCodeAt(i) - 48;
      if (dbl) { d *= 2; if (d > 9) { d -= 9; } }
      sum += d; dbl = !dbl;
    }
    return sum % 10 === 0;
  }

  function parseExp(s) {
    var m = /^\s*(\d{1,2})\s*[\/\-]?\s*(\d{2}|\d{4})\s*$/.exec(s);
    if (!m) { return null; }
    var month = +m[1], year = +m[2];
    if (month < 1 || month > 12) { return null; }
    if (year < 100) { year += 2000; }
    return { month: month, year: year };
  }

  function ibanValid(s) {
    var v = s.replace(/\s/g, "").toUpperCase();
    if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(v)) { return false; }
    var r = v.slice(4) + v.slice(0, 4), rem = 0;
    for (var i = 0; i < r.length; i++) {
      var c = r.charCodeAt(i);
      rem = c >= 65 ? (rem * 100 + c - 55) % 97 : (rem * 10 + c - 48) % 97;
    }
    return rem === 1;
  }

  // check returns the message for a field, "" when it is fine.
  function check(name, value) {
    switch (name) {
      case "card_number":
        var n = value.replace(/[\s\-]/g, "");
        return (/^\d{12,19}$/.test(n) && luhn(n)) ? "" : MSG.number;
      case "card_exp":
        var e = parseExp(value);
        if (!e) { return MSG.exp; }
        var now = new Date();
        return (e.year > now.getUTCFullYear() || (e.year === now.getUTCFullYear() && e.month >= now.getUTCMonth() + 1)) ? "" : MSG.expired;
      case "card_cvc":
        return /^\d{3,4}$/.test(value) ? "" : MSG.cvc;
      case "iban":
        return ibanValid(value) ? "" : MSG.iban;
      case "account_holder":
        return value.trim().length >= 2 ? "" : MSG.holder;
    }
    return "";
  }

  function showField(name, msg) {
    var input = $(name), err = $("err-" + name);
    if (!input || !err) { return; }
    err.textContent = msg;
    err.hidden = !msg;
    if (msg) { input.setAttribute("aria-invalid", "true"); } else { input.removeAttribute("aria-invalid"); }
  }

  function showForm(msg, declineCode) {
    var el = $("form-error");
    if (!el) { return; }
    el.textContent = msg || "";
    el.hidden = !msg;
    if (declineCode) { el.setAttribute("data-decline-code", declineCode); } else { el.removeAttribute("data-decline-code"); }
  }

  function formatCard(input) {
    var d = digits(input.value).slice(0, 19);
    input.value = d.replace(/(\d{4})(?=\d)/g, "$1 ");
  }

  function formatExp(input, ev) {
    if (ev && ev.inputType && ev.inputType.indexOf("delete") === 0) { return; }
    var d = digits(input.value).slice(0, 6);
    if (d.length === 1 && d > "1") { d = "0" + d; }
    input.value = d.length > 2 ? d.slice(0, 2) + " / " + d.slice(2) : d;
  }

  // leave opens url in the window that holds the checkout: the merchant's page when embedded.
  function leave(url, embed) {
    if (embed) {
      try { window.top.location.href = url; return; } catch (e) { /* fall through: the frame itself */ }
    }
    window.location.href = url;
  }

  var Fallback = {};

  function callAPI(id, secret, path, body) {
    return fetch("/api/v1/checkout/sessions/" + encodeURIComponent(id) + path, {
      method: "POST",
      headers: { "Authorization": "Bearer " + secret, "Content-Type": "application/json" },
      body: JSON.stringify(body || {}),
      credentials: "omit",
      cache: "no-store"
    }).then(function (res) {
      var type = res.headers.get("Content-Type") || "";
      if (type.indexOf("json") < 0 || res.status === 404 || res.status === 405) { throw Fallback; }
      return res.json().then(function (b) { return { status: res.status, body: b || {} }; });
    }, function () { throw Fallback; });
  }

  function cardBody(form) {
    var e = parseExp(form.card_exp.value);
    return {
      payment_method: "card",
      card: {
        number: form.card_number.value.replace(/[\s\-]/g, ""),
        exp_month: e.month, exp_year: e.year, cvc: form.card_cvc.value.trim(),
        name: form.card_name.value.trim()
      }
    };
  }

  function sepaBody(form) {
    return {
      payment_method: "sepa_debit",
      sepa_debit: { iban: form.iban.value.replace(/\s/g, "").toUpperCase(), account_holder: form.account_holder.value.trim() }
    };
  }

  // showDone replaces the page with the outcome; title is the page title, rows are [label, value]
  // pairs of a receipt.
  function showDone(title, heading, message, rows) {
    var main = document.querySelector("main");
    main.textContent = "";
    var s = document.createElement("section");
    s.className = "outcome"; s.id = "outcome";
    var h = document.createElement("h1"); h.id = "heading"; h.textContent = heading;
    var p = document.createElement("p"); p.id = "message"; p.textContent = message;
    s.appendChild(h); s.appendChild(p);
    if (rows && rows.length) {
      var dl = document.createElement("dl");
      dl.className = "receipt"; dl.id = "receipt";
      rows.forEach(function (r) {
        if (!r[1]) { return; }
        var dt = document.createElement("dt"), dd = document.createElement("dd");
        dt.textContent = r[0]; dd.textContent = r[1];
        dl.appendChild(dt); dl.appendChild(dd);
      });
      s.appendChild(dl);
    }
    main.appendChild(s);
    // The outcome replaced the form: say so in the title and move focus to it, so a screen
    // reader announces it and keyboard users continue from there.
    document.title = title;
    h.setAttribute("tabindex", "-1");
    h.focus();
  }

  // receiptRows reads what the receipt shows from the page (merchant, total, as the server
  // formatted them) and from the confirmation (how it was paid).
  function receiptRows(body, status) {
    var text = function (id) { var e = document.getElementById(id); return e ? e.textContent : ""; };
    var pay = body.session && body.session.payment, method = "";
    if (pay && pay.card && pay.card.last4) {
      method = "Card •••• " + pay.card.last4;
    } else if (pay && pay.payment_method === "sepa_debit") {
      method = "SEPA Direct Debit";
    }
    return [["Paid to", text("merchant")], ["Amount", text("total")], ["Status", status], ["Payment method", method]];
  }

  function enhancePay(root) {
    var id = root.getAttribute("data-session"), secret = root.getAttribute("data-secret");
    var base = root.getAttribute("data-base"), embed = root.getAttribute("data-embed") === "1";
    var busy = false;

    ["card_number", "card_exp", "card_cvc", "iban", "account_holder"].forEach(function (name) {
      var input = $(name);
      if (!input) { return; }
      input.addEventListener("input", function (ev) {
        if (name === "card_number") { formatCard(input); }
        if (name === "card_exp") { formatExp(input, ev); }
        if (name === "card_cvc") { input.value = digits(input.value).slice(0, 4); }
        // While typing: clear an error as soon as the value is right, and complain before
        // the field is left only once the value is complete (a full card number, a full date).
        var msg = check(name, input.value), v = digits(input.value);
        if (!msg) { showField(name, ""); }
        else if ((name === "card_number" && v.length >= 16) || (name === "card_exp" && v.length >= 4)) { showField(name, msg); }
      });
      input.addEventListener("blur", function () {
        if (input.value) { showField(name, check(name, input.value)); }
      });
    });

    function finish(body) {
      var st = body.status;
      if (st === "requires_action") {
        var next = body.next_action && body.next_action.redirect_url;
        window.location.href = next || (base + "/3ds?cs=" + encodeURIComponent(secret));
        return;
      }
      if (body.redirect_url) { leave(body.redirect_url, embed); return; }
      if (st === "processing") {
        showDone("Payment processing", "Thank you, your payment is processing.", "Your bank transfers the amount in the next few days; you will receive a confirmation by e-mail.", receiptRows(body, "Processing"));
      } else {
        showDone("Payment received", "Thank you, your payment was received.", "You will receive a receipt by e-mail.", receiptRows(body, "Paid"));
      }
    }

    function failed(res) {
      var err = (res.body && res.body.error) || {};
      if (res.status === 422 && err.code === "session_expired") {
        window.location.replace(window.location.pathname.indexOf("/3ds") >= 0 ? base + "?cs=" + encodeURIComponent(secret) : window.location.href);
        return;
      }
      var msg = err.message || MSG.failed, field = PARAMS[err.param];
      if (res.status === 402) { msg = DECLINES[err.decline_code] || msg; }
      if (field) { showField(field, msg); }
      showForm(msg, res.status === 402 ? err.decline_code : "");
      // Focus goes where the buyer continues: the field the refusal is about, else the
      // message (the Pay button, disabled while the request ran, would have dropped it).
      var target = (field && $(field)) || $("form-error");
      if (target) { target.focus(); }
    }

    function submitVia(form, button, path, body) {
      if (busy) { return; }
      busy = true;
      button.disabled = true;
      showForm("");
      callAPI(id, secret, path, body).then(function (res) {
        if (res.status >= 200 && res.status < 300) { finish(res.body); return; }
        busy = false; button.disabled = false;
        failed(res);
      }, function (e) {
        if (e === Fallback) { form.submit(); return; } // the plain post takes over
        busy = false; button.disabled = false;
        showForm(MSG.failed);
        $("form-error").focus();
      });
    }

    function guard(form, names, bodyOf) {
      if (!form) { return; }
      form.addEventListener("submit", function (ev) {
        ev.preventDefault();
        if (busy) { return; }
        var bad = false;
        names.forEach(function (n) {
          var msg = check(n, form[n].value);
          showField(n, msg);
          if (msg && !bad) { bad = true; form[n].focus(); }
        });
        if (bad) { return; }
        submitVia(form, form.querySelector("button[type=submit]"), "/confirm", bodyOf(form));
      });
    }
    guard($("card-form"), ["card_number", "card_exp", "card_cvc"], cardBody);
    guard($("sepa-form"), ["account_holder", "iban"], sepaBody);

    var cancel = $("cancel-form");
    if (cancel) {
      cancel.addEventListener("submit", function (ev) {
        ev.preventDefault();
        if (busy) { return; }
        busy = true;
        var button = cancel.querySelector("button");
        button.disabled = true;
        callAPI(id, secret, "/cancel", {}).then(function (res) {
          if (res.status >= 200 && res.status < 300) {
            if (res.body.redirect_url) { leave(res.body.redirect_url, embed); return; }
            showDone("Payment canceled", "You canceled the payment.", "Nothing was charged. You can close this page.");
            return;
          }
          busy = false; button.disabled = false;
          failed(res);
        }, function (e) {
          if (e === Fallback) { cancel.submit(); return; }
          busy = false; button.disabled = false;
          showForm(MSG.failed);
        });
      });
    }
  }

  // The challenge page stays a plain post (its two buttons carry the answer); the script only
  // makes sure that it is sent once.
  function enhanceChallenge(form) {
    var sent = false;
    form.addEventListener("submit", function (ev) {
      if (sent) { ev.preventDefault(); return; }
      sent = true;
      // Disabled buttons are left out of the form data: disable after the submission started.
      setTimeout(function () {
        Array.prototype.forEach.call(form.querySelectorAll("button"), function (b) { b.disabled = true; });
      }, 0);
    });
  }

  function init() {
    var pay = $("pay");
    if (pay) { enhancePay(pay); }
    var challenge = $("challenge-form") || $("invoice-challenge-form");
    if (challenge) { enhanceChallenge(challenge); }
    // The hosted invoice page takes plain form posts: after a refusal it comes back with the
    // message, whose alert is not reliably announced on load. Focus it, so that it is read
    // and keyboard users continue from the form.
    var invoiceError = $("invoice-pay") && $("form-error");
    if (invoiceError && !invoiceError.hidden) { invoiceError.focus(); }
    var cont = document.querySelector("[data-top-redirect]");
    if (cont) {
      try { window.top.location.href = cont.href; } catch (e) { /* the buyer follows the link */ }
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
