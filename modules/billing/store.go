package billing

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// Tx is what billing needs inside a unit of work: payments' repositories (a subscription's
// invoices are paid through the charge protocol, which runs in billing's units of work), the
// outbox and the mail queue, and billing's own repositories.
type Tx interface {
	payments.Tx
	Customers() CustomerRepository
	PaymentMethods() PaymentMethodRepository
	Subscriptions() SubscriptionRepository
	PendingSetups() PendingSetupRepository
}

// SubscriptionRepository keeps subscriptions inside a unit of work.
type SubscriptionRepository interface {
	Insert(ctx context.Context, s *Subscription) error
	// Lock reads subscription id of scope FOR UPDATE; an unknown one is ErrSubscriptionMissing.
	Lock(ctx context.Context, scope core.Scope, id string) (*Subscription, error)
	// LockMany reads the subscriptions refs name FOR UPDATE in one statement, locked in the
	// order of merchant, environment and id, and answers them in that order; one that is not
	// there is missing from the answer.
	LockMany(ctx context.Context, refs []SubscriptionRef) ([]*Subscription, error)
	// Save writes the subscription's state (and its due time, DueAt) in one UPDATE of its row.
	Save(ctx context.Context, s *Subscription) error
	// SaveMany writes the state of each of subs (each once) in one UPDATE for all of them, as
	// Save would one by one; a subscription that is not there is ErrSubscriptionMissing and
	// the unit of work must end.
	SaveMany(ctx context.Context, subs []*Subscription) error
	// ClaimDue locks up to limit subscriptions due at or before until (DueAt), earliest due
	// first, skipping rows another unit of work holds (SKIP LOCKED). With scope nil it covers
	// live scopes and test scopes whose clock is not frozen.
	ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*Subscription, error)
	// MarkRecurring marks the scope for the daily MRR snapshot (MRRHistory), the first at
	// next, unless it is marked already.
	MarkRecurring(ctx context.Context, scope core.Scope, next time.Time) error
}

// SubscriptionRef names a subscription of a scope.
type SubscriptionRef struct {
	Scope core.Scope
	ID    string
}

// SubscriptionFilter narrows a list of subscriptions (D14): each field set must match.
type SubscriptionFilter struct {
	Status   *Status
	Customer *string
	Price    *string
}

// CustomerRepository keeps customers inside a unit of work. Every call runs its statement
// where it is called.
type CustomerRepository interface {
	// FindOrInsert answers the scope's customer with c's e-mail (EmailKey), locked until the
	// unit of work ends: c itself, inserted, when there was none (created true). Concurrent
	// calls with one e-mail agree on one customer.
	FindOrInsert(ctx context.Context, c *Customer) (found *Customer, created bool, err error)
	// Lock reads customer id of scope FOR UPDATE; an unknown one is ErrNotFound.
	Lock(ctx context.Context, scope core.Scope, id string) (*Customer, error)
	// LockMany reads the customers refs name FOR UPDATE in one statement, locked in id order
	// (the order every other lock of several customers takes), and answers them in id order;
	// one that is not there is missing from the answer.
	LockMany(ctx context.Context, refs []CustomerRef) ([]*Customer, error)
	// Save writes the customer's state in one UPDATE that must change its one row.
	Save(ctx context.Context, c *Customer) error
	// Balance is the sum of the customer's balance transactions in currency (0 without any).
	// The caller holds the customer's lock, so the balance cannot change under it.
	Balance(ctx context.Context, scope core.Scope, customerID string, currency core.Currency) (int64, error)
	// Balances is Balance of each key, in one statement, in the keys' order (the caller holds
	// the customers' locks).
	Balances(ctx context.Context, keys []BalanceKey) ([]int64, error)
	// AddBalanceTransaction writes a change of the customer's balance.
	AddBalanceTransaction(ctx context.Context, t *BalanceTransaction) error
}

// CustomerRef names a customer of a scope.
type CustomerRef struct {
	Scope core.Scope
	ID    string
}

// BalanceKey names a customer's balance in one currency.
type BalanceKey struct {
	Scope    core.Scope
	Customer string
	Currency core.Currency
}

// PaymentMethodRepository keeps saved payment methods inside a unit of work.
type PaymentMethodRepository interface {
	// Insert writes a new method. One whose processor reference the scope keeps already is
	// not written and answers ErrMethodExists; the unit of work goes on.
	Insert(ctx context.Context, m *PaymentMethod) error
	// ByProcessorRef reads the scope's method with that processor reference; ErrMethodNotFound.
	ByProcessorRef(ctx context.Context, scope core.Scope, ref string) (*PaymentMethod, error)
	// Get reads method id of scope; ErrMethodNotFound.
	Get(ctx context.Context, scope core.Scope, id string) (*PaymentMethod, error)
	// GetMany reads the methods refs name in one statement (a method's ref is its scope and
	// id); one that is not there is missing from the answer, which is in no particular order.
	GetMany(ctx context.Context, refs []MethodRef) ([]*PaymentMethod, error)
}

// MethodRef names a saved method of a scope.
type MethodRef struct {
	Scope core.Scope
	ID    string
}

// Store reads customers and methods outside a unit of work.
type Store interface {
	// Customer reads customer id of scope; ErrNotFound.
	Customer(ctx context.Context, scope core.Scope, id string) (*Customer, error)
	// PaymentMethod reads method id of scope; ErrMethodNotFound.
	PaymentMethod(ctx context.Context, scope core.Scope, id string) (*PaymentMethod, error)
	// CustomerBalances is the customer's balance per currency, for each currency it has
	// balance transactions in.
	CustomerBalances(ctx context.Context, scope core.Scope, customerID string) (map[core.Currency]int64, error)
	// CustomerMethods lists the customer's saved methods, newest first.
	CustomerMethods(ctx context.Context, scope core.Scope, customerID string) ([]*PaymentMethod, error)
	// SubscriptionByPaymentIntent reads the subscription whose first payment is piID, of any
	// scope; ErrSubscriptionMissing.
	SubscriptionByPaymentIntent(ctx context.Context, piID string) (*Subscription, error)
	// Subscription reads subscription id of scope; ErrSubscriptionMissing.
	Subscription(ctx context.Context, scope core.Scope, id string) (*Subscription, error)
	// Subscriptions pages the scope's subscriptions newest first; a cursor that is not a
	// subscription of the scope is ErrUnknownCursor.
	Subscriptions(ctx context.Context, scope core.Scope, q core.ListQuery, f SubscriptionFilter) (core.Page[*Subscription], error)
	// PendingSetup reads the subscription's setup waiting for 3-D Secure; ErrNoPendingSetup.
	PendingSetup(ctx context.Context, scope core.Scope, subscriptionID string) (PendingSetup, error)
	// NextDue is the earliest due time of the scope's subscriptions at or before until.
	NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error)
}
