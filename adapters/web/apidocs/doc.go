// Package apidocs serves each API's reference as an HTML page: the page loads the API's
// served OpenAPI document from the same origin and renders it with RapiDoc, a renderer vendored
// at a pinned version under vendor/ and embedded in the binary. No request leaves the host: the
// renderer's web-font loading is turned off, and every page carries a Content-Security-Policy
// that allows only this origin (plus data: images and inline styles, which the renderer's
// components use).
//
// A Page serves two paths under the prefix it is mounted at: the page itself (e.g. /docs) and
// the renderer script beside it (e.g. /docs/rapidoc-9.3.8.min.js, cached for a year since its
// name carries the version). Only GET and HEAD are served; the listener answers other methods.
package apidocs
