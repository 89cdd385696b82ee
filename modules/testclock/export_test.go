package testclock

// NewFakeStores returns the fake stores of two processes over one storage and a function that
// kills the second (for the contract suite in store_contract_test.go).
func NewFakeStores() (a, b Store, killB func()) {
	w := newMemWorld()
	sb := &memStore{w: w, me: 2}
	return &memStore{w: w, me: 1}, sb, sb.kill
}
