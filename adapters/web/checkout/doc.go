// Package checkoutweb serves the hosted checkout pages of the checkout origin (interface 2.1,
// 5.2, D6): `/c/{id}?cs=…` and its frameable twin `/embed/{id}?cs=…`, the simulated 3-D Secure
// challenge, the outcome pages, and the static assets (the page's own stylesheet and script,
// and kassa.js for merchants' pages).
//
// The pages are rendered on the server with html/template and work without JavaScript: every
// action is a plain form post, answered with a redirect or a page. checkout.js enhances them
// (validation as the buyer types, confirmation through the browser API without a reload) but
// is never needed. Everything the buyer may do is authorised by the session's client secret
// only, and the use cases decide every outcome; this package renders them and holds no rule of
// its own beyond checking the shape of what was typed before it is sent.
package checkoutweb
