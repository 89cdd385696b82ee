// Package catalog holds the merchant's products and prices (interface 2.4, 2.5, 3.5, 4.3; D13):
// the entities that guard their own rules, the use cases of the Service, and the Store port the
// postgres adapter implements. It is pure: no SQL, no HTTP, and it emits no events.
package catalog
