// Package apps is the installed-apps capability: apps registered by the operator, their
// installations on a merchant (a UUID, the scopes the merchant granted, and one live and one
// test token), and the authentication of App API requests by those tokens. It serves the
// interface's App API authentication and scopes and the operator's app and installation
// operations. It knows no SQL and no HTTP; the App API itself is adapters/http/appapi.
package apps
