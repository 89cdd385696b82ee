// Package present translates module entities into the wire types of the merchant API's
// schemas, which the other APIs share (a product, price or event has one wire form whichever
// API returns it). Sessions and payments render through adapters/wire, the one place that also
// renders event payloads.
package present
