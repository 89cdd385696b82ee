package identity

// NewFakeStore is the in-memory fake for the contract suite, which runs in package
// identity_test (identitytest imports identity).
func NewFakeStore() Store { return newMemStore() }
