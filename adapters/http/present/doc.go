// Package present translates module entities into the wire types of the merchant API's
// schemas, which the other APIs share (a session, payment, product, price or event has one
// wire form whichever API returns it, and event payloads use the same renderers).
package present
