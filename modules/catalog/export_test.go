package catalog

// NewFakeStore is the in-memory fake for the contract suite, which runs in package catalog_test
// (catalogtest imports catalog).
func NewFakeStore() Store { return newMemStore() }
