package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/fx"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// The proof that the charge protocol is payments' on PostgreSQL too: a payable kind defined
// only here (orders, in a table of the test's database) charged through payments.Charger with
// the sandbox processor: card, 3-D Secure, decline, SEPA and its settlement, and a crash
// between the attempt's commit and the outcome's, resolved once by the attempt sweeper. Its
// owner's Tx is payments.Tx itself: the order table is reached on the unit of work's
// transaction (postgres.AmbientGet/AmbientExec, test helpers).

var pgOrderKind = payments.KindSpec{Name: "test_order", Link: payments.LinkInvoice, Payments: payments.OnePaymentPerPayable}

type pgOrder struct {
	ID          string         `db:"id"`
	MerchantID  string         `db:"merchant_id"`
	Environment string         `db:"environment"`
	AmountMinor int64          `db:"amount"`
	Status      string         `db:"status"`
	Attempts    int            `db:"attempts"`
	Declines    int            `db:"declines"`
	Charging    string         `db:"charging"`
	ActionRef   sql.NullString `db:"action_ref"`
	ActionCard  sql.NullString `db:"action_card_country"`
}

// pgOrderPayable is the order as a payments.Payable.
type pgOrderPayable struct{ *pgOrder }

func (o pgOrderPayable) ID() string { return o.pgOrder.ID }
func (o pgOrderPayable) Scope() core.Scope {
	return core.Scope{MerchantID: o.MerchantID, Env: core.Environment(o.Environment)}
}
func (o pgOrderPayable) Amount() int64               { return o.AmountMinor }
func (o pgOrderPayable) Currency() core.Currency     { return "EUR" }
func (o pgOrderPayable) CustomerName() string        { return "Grace Hopper" }
func (o pgOrderPayable) CustomerEmail() string       { return "grace@example.com" }
func (o pgOrderPayable) Reference() *string          { return nil }
func (o pgOrderPayable) Description() *string        { return nil }
func (o pgOrderPayable) Metadata() map[string]string { return nil }

var errPgOrderNotOpen = errors.New("order: not open")

type pgOrders struct{ failApply atomic.Int32 }

var _ payments.PayableOwner[payments.Tx] = (*pgOrders)(nil)

func (*pgOrders) LockPayable(ctx context.Context, _ payments.Tx, scope core.Scope, id string) (payments.Payable, error) {
	var o pgOrder
	if err := postgres.AmbientGet(ctx, &o, `SELECT id, merchant_id, environment, amount, status, attempts, declines,
		charging, action_ref, action_card_country FROM test_orders
		WHERE merchant_id = $1 AND environment = $2 AND id = $3 FOR UPDATE`, scope.MerchantID, string(scope.Env), id); err != nil {
		return nil, fmt.Errorf("order %s: %w", id, err)
	}
	return pgOrderPayable{&o}, nil
}

func saveOrder(ctx context.Context, o *pgOrder) error {
	_, err := postgres.AmbientExec(ctx)(`UPDATE test_orders SET status = $2, attempts = $3, declines = $4, charging = $5,
		action_ref = $6, action_card_country = $7 WHERE id = $1`, o.ID, o.Status, o.Attempts, o.Declines, o.Charging, o.ActionRef, o.ActionCard)
	return err
}

func (*pgOrders) BeginCharge(ctx context.Context, _ payments.Tx, p payments.Payable, start payments.ChargeStart) (int, error) {
	o := p.(pgOrderPayable).pgOrder
	if o.Charging != "" {
		return 0, payments.ErrChargeInProgress
	}
	if o.Status != "open" {
		return 0, errPgOrderNotOpen
	}
	if start.Kind == payments.AttemptCharge {
		o.ActionRef, o.ActionCard = sql.NullString{}, sql.NullString{}
	}
	o.Attempts++
	o.Charging = payments.AttemptKey(o.ID, o.Attempts)
	return o.Attempts, saveOrder(ctx, o)
}

func (*pgOrders) KeptAction(p payments.Payable) *payments.CustomerAction {
	o := p.(pgOrderPayable).pgOrder
	if !o.ActionRef.Valid {
		return nil
	}
	card := &ports.CardInfo{Brand: "visa", Last4: "3184", Country: o.ActionCard.String, Funding: "credit", ExpMonth: 11, ExpYear: 2031}
	return &payments.CustomerAction{ProcessorRef: o.ActionRef.String, Method: ports.MethodCard, Card: card,
		Action: ports.ChargeAction{Kind: ports.ActionThreeDSecure}}
}

func (w *pgOrders) ApplyOutcome(ctx context.Context, _ payments.Tx, p payments.Payable, a *payments.ChargeAttempt, out *payments.ChargeOutcome) ([]core.Event, error) {
	if w.failApply.Add(-1) >= 0 {
		return nil, errors.New("order: the process died")
	}
	o := p.(pgOrderPayable).pgOrder
	if o.Charging != a.IdempotencyKey() {
		return nil, fmt.Errorf("order %s: %s is not the charge in flight", o.ID, a.IdempotencyKey())
	}
	o.Charging, o.ActionRef, o.ActionCard = "", sql.NullString{}, sql.NullString{}
	switch out.Result {
	case ports.OutcomeSucceeded:
		o.Status = "paid"
	case ports.OutcomeProcessing:
		o.Status = "processing"
	default:
		o.Declines++
	}
	return nil, saveOrder(ctx, o)
}

func (*pgOrders) KeepCustomerAction(ctx context.Context, _ payments.Tx, p payments.Payable, _ *payments.ChargeAttempt, act payments.CustomerAction) error {
	o := p.(pgOrderPayable).pgOrder
	o.Charging = ""
	o.ActionRef = sql.NullString{String: act.ProcessorRef, Valid: true}
	o.ActionCard = sql.NullString{String: act.Card.Country, Valid: true}
	return saveOrder(ctx, o)
}

func (*pgOrders) AbandonCharge(ctx context.Context, _ payments.Tx, p payments.Payable, a *payments.ChargeAttempt) error {
	o := p.(pgOrderPayable).pgOrder
	if o.Charging == a.IdempotencyKey() {
		o.Charging = ""
	}
	return saveOrder(ctx, o)
}

func (*pgOrders) ApplySettlement(ctx context.Context, _ payments.Tx, p payments.Payable, pay *payments.Payment, _ time.Time) ([]core.Event, error) {
	o := p.(pgOrderPayable).pgOrder
	o.Status = "failed"
	if pay.Status() == payments.StatusSucceeded {
		o.Status = "paid"
	}
	return nil, saveOrder(ctx, o)
}

type pgOrderWorld struct {
	db      *sqlx.DB
	scope   core.Scope
	owner   *pgOrders
	wall    *settableWall
	charger *payments.Charger
	sweeper *payments.AttemptSweeper
	settle  *payments.Sweeper
}

func newPgOrderWorld(t *testing.T) *pgOrderWorld {
	t.Helper()
	db := pgtest.New(t)
	if _, err := db.Exec(`CREATE TABLE test_orders (id text PRIMARY KEY, merchant_id text NOT NULL, environment text NOT NULL,
		amount bigint NOT NULL, status text NOT NULL, attempts int NOT NULL DEFAULT 0, declines int NOT NULL DEFAULT 0,
		charging text NOT NULL DEFAULT '', action_ref text, action_card_country text)`); err != nil {
		t.Fatal(err)
	}
	w := &pgOrderWorld{db: db, scope: pgtest.Merchant(t, db), owner: &pgOrders{}, wall: &settableWall{t: time.Now()}}
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) payments.Tx { return tx })
	kind, err := payments.BindKind[payments.Tx](pgOrderKind, uow, w.owner)
	if err != nil {
		t.Fatal(err)
	}
	proc := sandbox.NewWithJournal(postgres.NewSandboxJournal(db))
	w.charger, err = payments.NewCharger(payments.ChargerDeps{Fees: payments.NewFeeCalculator(payments.DefaultFeeSchedule(), fx.NewSample()),
		Processors: map[core.Environment]ports.Processor{core.EnvTest: proc}, Attempts: postgres.NewChargeAttemptStore(db),
		Wall: w.wall, Kinds: []payments.Kind{kind}, ChargeWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if w.sweeper, err = payments.NewAttemptSweeper(w.charger); err != nil {
		t.Fatal(err)
	}
	if w.settle, err = payments.NewSweeper(postgres.NewPaymentStore(db), uow,
		map[core.Environment]payments.Settlements{core.EnvTest: proc}, w.charger); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *pgOrderWorld) order(t *testing.T) string {
	t.Helper()
	id := core.NewID("ord_")
	if _, err := w.db.Exec(`INSERT INTO test_orders (id, merchant_id, environment, amount, status) VALUES ($1, $2, $3, 4200, 'open')`,
		id, w.scope.MerchantID, string(w.scope.Env)); err != nil {
		t.Fatal(err)
	}
	return id
}

func (w *pgOrderWorld) get(t *testing.T, id string) pgOrder {
	t.Helper()
	var o pgOrder
	if err := w.db.Get(&o, `SELECT id, merchant_id, environment, amount, status, attempts, declines, charging, action_ref,
		action_card_country FROM test_orders WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return o
}

func (w *pgOrderWorld) card(id, number string) payments.ChargeRequest {
	return payments.ChargeRequest{Kind: pgOrderKind.Name, Scope: w.scope, PayableID: id, Now: payNow, Method: ports.MethodCard,
		Source: payments.Source{Card: &ports.CardDetails{Number: number, ExpMonth: 11, ExpYear: 2031, CVC: "123"}}}
}

func (w *pgOrderWorld) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	return countRows(t, w.db, q, args...)
}

func TestSecondPayableKindOnPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newPgOrderWorld(t)

	t.Run("card", func(t *testing.T) {
		id := w.order(t)
		r, err := w.charger.Charge(ctx, w.card(id, visaDE))
		if err != nil || r.Outcome != ports.OutcomeSucceeded || r.Payment.PayableKind() != pgOrderKind.Name ||
			r.Payment.InvoiceID() == nil || *r.Payment.InvoiceID() != id {
			t.Fatalf("%+v %v", r, err)
		}
		if o := w.get(t, id); o.Status != "paid" || o.Charging != "" {
			t.Fatalf("order %+v", o)
		}
		if c := w.count(t, `SELECT count(*) FROM payments WHERE invoice_id = $1 AND payable_kind = 'test_order' AND payable_key = $1`, id); c != 1 {
			t.Fatalf("%d payments", c)
		}
		if _, err := w.charger.Charge(ctx, w.card(id, visaDE)); !errors.Is(err, errPgOrderNotOpen) {
			t.Fatalf("second charge: %v", err)
		}
	})

	t.Run("decline then 3-D Secure", func(t *testing.T) {
		id := w.order(t)
		if r, err := w.charger.Charge(ctx, w.card(id, "4000000000000002")); err != nil || r.Decline == nil {
			t.Fatalf("decline: %+v %v", r, err)
		}
		r, err := w.charger.Charge(ctx, w.card(id, "4000002760003184"))
		if err != nil || r.Outcome != ports.OutcomeRequiresAction {
			t.Fatalf("3-D Secure: %+v %v", r, err)
		}
		if o := w.get(t, id); !o.ActionRef.Valid || o.Declines != 1 {
			t.Fatalf("order %+v", o)
		}
		r, err = w.charger.Charge(ctx, payments.ChargeRequest{Kind: pgOrderKind.Name, Scope: w.scope, PayableID: id, Now: payNow,
			Answer: &payments.ActionAnswer{Approve: true}})
		if err != nil || r.Outcome != ports.OutcomeSucceeded || r.Payment == nil {
			t.Fatalf("answer: %+v %v", r, err)
		}
		if o := w.get(t, id); o.Status != "paid" || o.Attempts != 3 {
			t.Fatalf("order %+v", o)
		}
	})

	t.Run("SEPA and its settlement", func(t *testing.T) {
		id := w.order(t)
		r, err := w.charger.Charge(ctx, payments.ChargeRequest{Kind: pgOrderKind.Name, Scope: w.scope, PayableID: id, Now: payNow,
			Method: ports.MethodSEPADebit, Source: payments.Source{SEPA: &ports.SEPADetails{IBAN: ibanSettles, AccountHolder: "Grace Hopper"}}})
		if err != nil || r.Outcome != ports.OutcomeProcessing {
			t.Fatalf("%+v %v", r, err)
		}
		if n, err := w.settle.ProcessDue(ctx, &w.scope, payNow.Add(sandbox.SettleDelay)); err != nil || n != 1 {
			t.Fatalf("settle: %d %v", n, err)
		}
		if o := w.get(t, id); o.Status != "paid" {
			t.Fatalf("order %+v", o)
		}
		if c := w.count(t, `SELECT count(*) FROM payments WHERE invoice_id = $1 AND status = 'succeeded' AND available_at IS NOT NULL`, id); c != 1 {
			t.Fatalf("%d settled payments", c)
		}
	})

	t.Run("a crash between the steps is resolved once", func(t *testing.T) {
		id := w.order(t)
		w.owner.failApply.Store(1)
		if _, err := w.charger.Charge(ctx, w.card(id, visaDE)); err == nil {
			t.Fatal("the failed outcome was answered")
		}
		if o := w.get(t, id); o.Charging != id+":1" {
			t.Fatalf("order after the crash %+v", o)
		}
		if _, err := w.charger.Charge(ctx, w.card(id, visaDE)); !errors.Is(err, payments.ErrChargeInProgress) {
			t.Fatalf("a charge while the first is young: %v", err)
		}
		w.wall.add(payments.AttemptGrace + time.Second)
		var wg sync.WaitGroup
		resolved := make([]int, 3)
		for i := range resolved {
			wg.Go(func() {
				n, err := w.sweeper.ProcessDue(ctx, &w.scope, payNow)
				if err != nil {
					t.Error(err)
				}
				resolved[i] = n
			})
		}
		wg.Wait()
		if resolved[0]+resolved[1]+resolved[2] != 1 {
			t.Fatalf("resolved %v", resolved)
		}
		if o := w.get(t, id); o.Status != "paid" || o.Charging != "" {
			t.Fatalf("order %+v", o)
		}
		if c := w.count(t, `SELECT count(*) FROM payments WHERE invoice_id = $1`, id); c != 1 {
			t.Fatalf("%d payments", c)
		}
	})
}
