package webhooks

import "github.com/kassa-pay/kassa/core"

// FakeStore is the in-memory store of the use-case tests, for the contract suite run on it
// (store_contract_test.go).
type FakeStore = fakeStore

// NewFakeStore returns an empty FakeStore.
func NewFakeStore() *FakeStore { return newFakeStore() }

// Publish writes events to the fake's outbox.
func (f *fakeStore) Publish(evs ...core.EventRecord) { f.publish(evs...) }
