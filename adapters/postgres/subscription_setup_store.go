package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
)

// The subscription_setups table: a payment method being saved for a subscription that waits
// for the customer's 3-D Secure challenge (billing.PendingSetup), one per subscription.

const setupColumns = `merchant_id, environment, subscription_id, invoice_id, processor_ref, customer_ref, created`

type setupRow struct {
	MerchantID   string    `db:"merchant_id"`
	Environment  string    `db:"environment"`
	Subscription string    `db:"subscription_id"`
	Invoice      string    `db:"invoice_id"`
	ProcessorRef string    `db:"processor_ref"`
	CustomerRef  string    `db:"customer_ref"`
	Created      time.Time `db:"created"`
}

func (r setupRow) setup() billing.PendingSetup {
	return billing.PendingSetup{Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		Subscription: r.Subscription, Invoice: r.Invoice, ProcessorRef: r.ProcessorRef, CustomerRef: r.CustomerRef,
		Created: r.Created.UTC()}
}

func getSetup(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, subID string, lock bool) (billing.PendingSetup, error) {
	query := `SELECT ` + setupColumns + ` FROM subscription_setups
		WHERE merchant_id = $1 AND environment = $2 AND subscription_id = $3`
	if lock {
		query += ` FOR UPDATE`
	}
	var r setupRow
	err := sqlx.GetContext(ctx, q, &r, query, scope.MerchantID, string(scope.Env), subID)
	if errors.Is(err, sql.ErrNoRows) {
		return billing.PendingSetup{}, billing.ErrNoPendingSetup
	}
	if err != nil {
		return billing.PendingSetup{}, fmt.Errorf("subscription_setups: get: %w", err)
	}
	return r.setup(), nil
}

// PendingSetup reads the subscription's setup waiting for 3-D Secure.
func (st *BillingStore) PendingSetup(ctx context.Context, scope core.Scope, subID string) (billing.PendingSetup, error) {
	return getSetup(ctx, st.db, scope, subID, false)
}

// setupRepo is billing.PendingSetupRepository on a transaction.
type setupRepo Tx

// PendingSetups is billing's pending-setup repository on this transaction.
func (t *Tx) PendingSetups() billing.PendingSetupRepository { return setupRepo(*t) }

// Put writes the pending setup, replacing the subscription's.
func (r setupRepo) Put(ctx context.Context, p billing.PendingSetup) error {
	_, err := r.q.ExecContext(ctx, `INSERT INTO subscription_setups (`+setupColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (merchant_id, environment, subscription_id) DO UPDATE SET invoice_id = EXCLUDED.invoice_id,
			processor_ref = EXCLUDED.processor_ref, customer_ref = EXCLUDED.customer_ref, created = EXCLUDED.created`,
		p.Scope.MerchantID, string(p.Scope.Env), p.Subscription, p.Invoice, p.ProcessorRef, p.CustomerRef, p.Created)
	if err != nil {
		return fmt.Errorf("subscription_setups: put %s: %w", p.Subscription, r.q.a.note(err))
	}
	return nil
}

// Lock reads the subscription's pending setup FOR UPDATE.
func (r setupRepo) Lock(ctx context.Context, scope core.Scope, subID string) (billing.PendingSetup, error) {
	p, err := getSetup(ctx, r.q, scope, subID, true)
	return p, r.q.a.note(err)
}

// Delete removes the subscription's pending setup.
func (r setupRepo) Delete(ctx context.Context, scope core.Scope, subID string) error {
	_, err := r.q.ExecContext(ctx, `DELETE FROM subscription_setups
		WHERE merchant_id = $1 AND environment = $2 AND subscription_id = $3`, scope.MerchantID, string(scope.Env), subID)
	if err != nil {
		return fmt.Errorf("subscription_setups: delete %s: %w", subID, r.q.a.note(err))
	}
	return nil
}
