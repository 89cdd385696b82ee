package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/ports"
)

// slowProcessor succeeds every card after a pause (so concurrent confirmations overlap), except
// the 3-D Secure test number, and counts its charges.
type slowProcessor struct{ charges atomic.Int32 }

// Refund and LookupRefund: these tests refund nothing.
func (p *slowProcessor) Refund(context.Context, ports.RefundRequest, time.Time) (ports.RefundResult, error) {
	return ports.RefundResult{}, ports.ErrRefundRequestInvalid
}

func (p *slowProcessor) LookupRefund(context.Context, core.Scope, string, time.Time) (ports.RefundResult, error) {
	return ports.RefundResult{}, ports.ErrRefundUnknown
}

func (p *slowProcessor) Charge(_ context.Context, req ports.ChargeRequest, _ time.Time) (ports.ChargeResult, error) {
	p.charges.Add(1)
	time.Sleep(20 * time.Millisecond)
	card := &ports.CardInfo{Brand: "visa", Last4: core.Last4(req.Card.Number), Country: "DE", Funding: "debit", ExpMonth: 11, ExpYear: 2031}
	if req.Card.Number == "4000002760003184" {
		return ports.ChargeResult{Outcome: ports.OutcomeRequiresAction, ProcessorRef: "ref_" + req.IdempotencyKey, Card: card,
			Action: &ports.ChargeAction{Kind: ports.ActionThreeDSecure}}, nil
	}
	return ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: "ref_" + req.IdempotencyKey, Card: card}, nil
}

func (p *slowProcessor) CompleteAction(_ context.Context, ref string, approve bool, _ time.Time) (ports.ChargeResult, error) {
	if !approve {
		return ports.ChargeResult{Outcome: ports.OutcomeFailed, ProcessorRef: ref, DeclineCode: ports.DeclineAuthenticationFailed}, nil
	}
	return ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: ref}, nil
}

func (p *slowProcessor) Settle(context.Context, string, time.Time) (ports.ChargeResult, error) {
	return ports.ChargeResult{}, ports.ErrChargeNotSettleable
}

func (p *slowProcessor) Lookup(context.Context, core.Scope, string, time.Time) (ports.ChargeResult, error) {
	return ports.ChargeResult{}, ports.ErrChargeUnknown
}

type namedMerchant struct{}

func (namedMerchant) BuyerMerchant(context.Context, string) (checkout.BuyerMerchant, error) {
	return checkout.BuyerMerchant{Name: "Shop", Onboarded: true}, nil
}

func buyerOn(db *sqlx.DB, proc ports.Processor) *checkout.Service {
	svc, _ := chargeOn(db, checkoutUoW(db), fixedClocks{time.Date(2026, 5, 1, 8, 30, 0, 0, time.UTC)}, core.SystemClock{},
		map[core.Environment]ports.Processor{core.EnvTest: proc})
	return svc
}

func card(number string) checkout.ConfirmInput {
	return checkout.ConfirmInput{Method: ports.MethodCard, Card: &ports.CardDetails{Number: number, ExpMonth: 11, ExpYear: 2031, CVC: "123"}}
}

func TestSessionStoreFindsByClientSecretHash(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	store := postgres.NewSessionStore(db)
	s := createSession(t, checkoutOn(db, fixedClocks{time.Date(2026, 5, 1, 8, 30, 0, 0, time.UTC)}), scope)
	got, err := store.FindByClientSecretHash(context.Background(), sha256.Sum256([]byte(s.ClientSecret())))
	if err != nil || got.Session.ID() != s.ID() || got.Session.Scope() != scope || got.Frozen != nil {
		t.Fatalf("find = %+v, %v", got, err)
	}
	if want := (checkout.BuyerMerchant{Name: "Test merchant", Onboarded: true}); got.Merchant != want {
		t.Fatalf("merchant = %+v, want %+v", got.Merchant, want)
	}
	// The merchant is read with the session, as it stands then.
	if _, err := db.Exec(`UPDATE merchants SET name = 'Renamed', onboarded = false WHERE id = $1`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	got, err = store.FindByClientSecretHash(context.Background(), sha256.Sum256([]byte(s.ClientSecret())))
	if want := (checkout.BuyerMerchant{Name: "Renamed"}); err != nil || got.Merchant != want {
		t.Fatalf("after the change: merchant = %+v, %v; want %+v", got.Merchant, err, want)
	}
	_, err = store.FindByClientSecretHash(context.Background(), sha256.Sum256([]byte(s.ClientSecret()+"x")))
	if !errors.Is(err, checkout.ErrNotFound) {
		t.Fatalf("unknown hash: %v, want checkout.ErrNotFound", err)
	}
}

func TestSessionStoreKeepsThePendingCharge(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	svc := buyerOn(db, &slowProcessor{})
	s := createSession(t, svc, scope)
	res, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), card("4000002760003184"))
	if err != nil || res.Status != checkout.ConfirmRequiresAction {
		t.Fatalf("confirm = %+v, %v", res, err)
	}
	got, err := postgres.NewSessionStore(db).Get(context.Background(), scope, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	b := got.Buyer()
	want := checkout.PendingCharge{ProcessorRef: "ref_" + s.ID() + ":1", Method: ports.MethodCard,
		Card:   &ports.CardInfo{Brand: "visa", Last4: "3184", Country: "DE", Funding: "debit", ExpMonth: 11, ExpYear: 2031},
		Action: checkout.PendingAction{Kind: ports.ActionThreeDSecure}}
	if b.Attempts != 1 || b.Declines != 0 || b.Pending == nil || b.Pending.ProcessorRef != want.ProcessorRef ||
		*b.Pending.Card != *want.Card || b.Pending.Action != want.Action || b.Pending.Method != want.Method {
		t.Fatalf("buyer state = %+v pending %+v", b, b.Pending)
	}
	if _, err := svc.ResolveAction(context.Background(), s.ID(), s.ClientSecret(), false); err == nil {
		t.Fatal("a refused challenge did not decline")
	}
	got, _ = postgres.NewSessionStore(db).Get(context.Background(), scope, s.ID())
	if b := got.Buyer(); b.Pending != nil || b.Declines != 1 || got.Status() != checkout.StatusOpen {
		t.Fatalf("after refusal: %+v %s", b, got.Status())
	}
}

// Concurrent confirmations serialise on the session row: one charge, one payment, one event.
func TestSessionStoreConfirmsExactlyOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	proc := &slowProcessor{}
	svc := buyerOn(db, proc)
	s := createSession(t, svc, scope)
	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), card("4242424242424242"))
			switch {
			case err == nil:
				ok.Add(1)
			case !errors.Is(err, checkout.ErrSessionExpired):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	var payments, completed int
	if err := db.Get(&payments, `SELECT count(*) FROM payments WHERE merchant_id = $1 AND session_id = $2`, scope.MerchantID, s.ID()); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&completed, `SELECT count(*) FROM events WHERE merchant_id = $1 AND type = 'checkout.session.completed' AND object->>'id' = $2`,
		scope.MerchantID, s.ID()); err != nil {
		t.Fatal(err)
	}
	if ok.Load() != 1 || proc.charges.Load() != 1 || payments != 1 || completed != 1 {
		t.Fatalf("ok %d, charges %d, payments %d, completed events %d; want 1 each", ok.Load(), proc.charges.Load(), payments, completed)
	}
}
