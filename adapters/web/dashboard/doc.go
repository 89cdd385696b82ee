// Package dashboardweb serves the merchant dashboard's pages on the dashboard origin: two HTML
// shells (sign-in and the signed-in app), and the stylesheet and scripts they load, all embedded
// in the binary. The pages have no business rules and no data of their own: the scripts call the
// dashboard JSON API on the same origin (openapi/dashboard.yaml, under /api/, mounted beside this
// handler by cmd/kassa) with the session cookie and the X-CSRF-Token header.
//
// The pages are plain HTML, CSS and JavaScript modules with no build step and no framework, so a
// reader can open any file and see what the browser gets. Every response carries a strict
// Content-Security-Policy (no inline script or style, no framing), which is why the shells hold no
// markup beyond a mount point and every style lives in app.css.
package dashboardweb
