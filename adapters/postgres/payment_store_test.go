package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/fx"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// paymentsOn is a checkout service with payments wired as in production (fees over the ECB
// sample fixture, the HTTP presenters for event payloads).
func paymentsOn(db *sqlx.DB, clocks ports.Clocks) *checkout.Service {
	svc := checkout.NewService(postgres.NewSessionStore(db), noPrices{}, clocks, "https://pay.example.test")
	svc.EnablePayments(payments.NewFeeCalculator(payments.DefaultFeeSchedule(), fx.NewSample()))
	return svc
}

var payNow = time.Date(2026, 5, 1, 8, 30, 0, 0, time.UTC)

func visa(country string) checkout.CompletionInput {
	return checkout.CompletionInput{Method: ports.MethodCard, Outcome: ports.OutcomeSucceeded, ProcessorRef: "sbx_test_ref",
		Card: &ports.CardInfo{Brand: "visa", Last4: "4242", Country: country, Funding: "credit", ExpMonth: 12, ExpYear: 2031}}
}

func eventsOf(t *testing.T, db *sqlx.DB, scope core.Scope, typ core.EventType) []map[string]any {
	t.Helper()
	var raw []string
	if err := db.Select(&raw, `SELECT data::text FROM events WHERE merchant_id = $1 AND environment = $2 AND type = $3 ORDER BY created, id`,
		scope.MerchantID, string(scope.Env), string(typ)); err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func countRows(t *testing.T, db *sqlx.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Get(&n, query, args...); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCompleteRoundTripAndPayloads(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	ctx := context.Background()
	ref := "order-7"
	in := sessionInput()
	in.Reference = &ref
	in.Metadata = map[string]string{"order": "7"}
	s, err := svc.Create(ctx, core.Caller{Scope: scope, Onboarded: true}, in)
	if err != nil {
		t.Fatal(err)
	}
	done, err := svc.Complete(ctx, scope, s.ID(), visa("US"))
	if err != nil {
		t.Fatal(err)
	}
	p := done.Payment()
	// 2500 EUR cents, non-EEA: round(2500 × 2.8%) + 25 = 95.
	if p.Fee().ServiceFeeEUR != 95 || p.Fee().ServiceFeeChargeCurrency != 95 || !p.Fee().RateDate.Equal(ports.DateOf(payNow)) {
		t.Fatalf("fee %+v", p.Fee())
	}

	// Retrieve embeds the stored payment, identical to the one created.
	got, err := svc.Get(ctx, scope, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Status() != checkout.StatusComplete || got.Payment() == nil {
		t.Fatalf("get: %s %v", got.Status(), got.Payment())
	}
	if want, have := p.Snapshot(), got.Payment().Snapshot(); !reflect.DeepEqual(want, have) {
		t.Fatalf("payment round trip differs:\nwant %+v\nhave %+v", want, have)
	}
	byID, err := postgres.NewPaymentStore(db).Get(ctx, scope, p.ID())
	if err != nil || !reflect.DeepEqual(byID.Snapshot(), p.Snapshot()) {
		t.Fatalf("payment store get: %v", err)
	}
	page, err := svc.List(ctx, scope, core.ListQuery{}, "")
	if err != nil || len(page.Items) != 1 || page.Items[0].Payment() == nil || page.Items[0].Payment().ID() != p.ID() {
		t.Fatalf("list: %v %v", page.Items, err)
	}
	var exp struct {
		Month, Year   int
		Ref           string
		SettlesAtNull bool
	}
	if err := db.QueryRow(`SELECT card_exp_month, card_exp_year, processor_ref, settles_at IS NULL FROM payments WHERE id = $1`, p.ID()).
		Scan(&exp.Month, &exp.Year, &exp.Ref, &exp.SettlesAtNull); err != nil {
		t.Fatal(err)
	}
	if exp.Month != 12 || exp.Year != 2031 || exp.Ref != "sbx_test_ref" || !exp.SettlesAtNull {
		t.Fatalf("processor facts %+v", exp)
	}

	// Events: payment_intent.succeeded carries the payment (2.2), checkout.session.completed
	// the session with the payment embedded.
	pis := eventsOf(t, db, scope, payments.EventPaymentIntentSucceeded)
	cs := eventsOf(t, db, scope, checkout.EventCompleted)
	if len(pis) != 1 || len(cs) != 1 {
		t.Fatalf("%d payment_intent.succeeded, %d completed", len(pis), len(cs))
	}
	pay := pis[0]
	if pay["id"] != p.ID() || pay["object"] != "payment" || pay["session_id"] != s.ID() || pay["amount"] != 2500.0 ||
		pay["amount_refunded"] != 0.0 || pay["currency"] != "EUR" || pay["status"] != "succeeded" ||
		pay["payment_method"] != "card" || pay["reference"] != "order-7" || pay["invoice_id"] != nil {
		t.Errorf("payment payload %v", pay)
	}
	if card := pay["card"].(map[string]any); card["last4"] != "4242" || card["country"] != "US" || card["brand"] != "visa" || card["funding"] != "credit" {
		t.Errorf("card %v", card)
	}
	if fee := pay["fee"].(map[string]any); fee["service_fee_eur"] != 95.0 || fee["currency"] != "EUR" {
		t.Errorf("fee %v", fee)
	}
	if c := pay["customer"].(map[string]any); c["email"] != "grace@example.com" {
		t.Errorf("customer %v", c)
	}
	if md := pay["metadata"].(map[string]any); md["order"] != "7" {
		t.Errorf("metadata %v", md)
	}
	if cs[0]["status"] != "complete" || cs[0]["payment"].(map[string]any)["id"] != p.ID() {
		t.Errorf("completed payload %v", cs[0])
	}
}

func TestCompleteSEPAStoresSettlement(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	ctx := context.Background()
	s := createSession(t, svc, scope)
	at := payNow.Add(48 * time.Hour)
	done, err := svc.Complete(ctx, scope, s.ID(), checkout.CompletionInput{Method: ports.MethodSEPADebit,
		Outcome: ports.OutcomeProcessing, ProcessorRef: "sbx_sepa", SEPA: &ports.SEPAInfo{Country: "DE", Last4: "3000"}, SettlesAt: &at})
	if err != nil {
		t.Fatal(err)
	}
	if done.Payment().Status() != payments.StatusProcessing {
		t.Fatalf("status %s", done.Payment().Status())
	}
	if n := countRows(t, db, `SELECT count(*) FROM payments WHERE status = 'processing' AND settles_at = $1
		AND sepa_last4 = '3000' AND sepa_country = 'DE' AND card_brand IS NULL`, at); n != 1 {
		t.Fatalf("%d settling rows", n)
	}
	pending := eventsOf(t, db, scope, checkout.EventAsyncPaymentPending)
	if len(pending) != 1 || pending[0]["payment"].(map[string]any)["status"] != "processing" {
		t.Fatalf("pending events %v", pending)
	}
	if n := len(eventsOf(t, db, scope, checkout.EventCompleted)); n != 0 {
		t.Fatalf("%d completed events for a processing payment", n)
	}
}

func TestCompleteExactlyOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	s := createSession(t, svc, scope)
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = svc.Complete(context.Background(), scope, s.ID(), visa("DE"))
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, checkout.ErrSessionAlreadyCompleted):
			t.Errorf("loser: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d winners", won)
	}
	if c := countRows(t, db, `SELECT count(*) FROM payments WHERE session_id = $1`, s.ID()); c != 1 {
		t.Fatalf("%d payments", c)
	}
	if c := len(eventsOf(t, db, scope, checkout.EventCompleted)); c != 1 {
		t.Fatalf("%d completed events", c)
	}
	if c := len(eventsOf(t, db, scope, payments.EventPaymentIntentSucceeded)); c != 1 {
		t.Fatalf("%d payment_intent.succeeded events", c)
	}
}

func TestCompleteRollsBackWhenThePaymentInsertFails(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	ctx := context.Background()
	s := createSession(t, svc, scope)
	// A stray payment of the session makes the insert fail (one payment per session).
	if _, err := db.Exec(`INSERT INTO payments (id, merchant_id, environment, session_id, amount, currency, status,
		payment_method, fee_service_eur, fee_psp_eur, fee_service_charge_currency, fee_currency, fee_rate_date,
		customer_name, customer_email, processor_ref, created)
		VALUES ('py_stray', $1, $2, $3, 2500, 'EUR', 'succeeded', 'sepa_debit', 35, 20, 35, 'EUR', '2026-05-01',
		'x', 'x@example.com', 'ref', now())`, scope.MerchantID, string(scope.Env), s.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Complete(ctx, scope, s.ID(), visa("DE")); !errors.Is(err, postgres.ErrPaymentExists) {
		t.Fatalf("want ErrPaymentExists, got %v", err)
	}
	var status string
	if err := db.Get(&status, `SELECT status FROM checkout_sessions WHERE id = $1`, s.ID()); err != nil || status != "open" {
		t.Fatalf("session %s %v", status, err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM events WHERE merchant_id = $1`, scope.MerchantID); c != 0 {
		t.Fatalf("%d events after a rolled-back completion", c)
	}
	if c := countRows(t, db, `SELECT count(*) FROM payments WHERE session_id = $1`, s.ID()); c != 1 {
		t.Fatalf("%d payments", c)
	}
}

func TestCompleteTenantIsolation(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	other := pgtest.Merchant(t, db)
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	svc := paymentsOn(db, fixedClocks{payNow})
	ctx := context.Background()
	s := createSession(t, svc, scope)
	notFound := core.NotFound("session", "", "")
	for _, sc := range []core.Scope{other, live} {
		if _, err := svc.Complete(ctx, sc, s.ID(), visa("DE")); !errors.Is(err, notFound) {
			t.Errorf("complete under %v: %v", sc, err)
		}
		if err := svc.RecordDecline(ctx, sc, s.ID(), checkout.DeclineInput{Method: ports.MethodCard, DeclineCode: "generic_decline"}); !errors.Is(err, notFound) {
			t.Errorf("decline under %v: %v", sc, err)
		}
	}
	done, err := svc.Complete(ctx, scope, s.ID(), visa("DE"))
	if err != nil {
		t.Fatal(err)
	}
	ps := postgres.NewPaymentStore(db)
	for _, sc := range []core.Scope{other, live} {
		if _, err := ps.Get(ctx, sc, done.Payment().ID()); !errors.Is(err, core.NotFound("payment", "", "")) {
			t.Errorf("payment get under %v: %v", sc, err)
		}
		if _, err := ps.GetBySession(ctx, sc, s.ID()); !errors.Is(err, core.NotFound("payment", "", "")) {
			t.Errorf("payment by session under %v: %v", sc, err)
		}
	}
	if p, err := ps.GetBySession(ctx, scope, s.ID()); err != nil || p.ID() != done.Payment().ID() {
		t.Fatalf("own payment by session: %v", err)
	}
}

func TestRecordDeclineAndCancelOnPostgres(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	ctx := context.Background()
	s := createSession(t, svc, scope)
	if err := svc.RecordDecline(ctx, scope, s.ID(), checkout.DeclineInput{Method: ports.MethodCard,
		DeclineCode: ports.DeclineGenericDecline, FailureMessage: "Your card was declined."}); err != nil {
		t.Fatal(err)
	}
	failed := eventsOf(t, db, scope, payments.EventPaymentIntentPaymentFailed)
	if len(failed) != 1 || failed[0]["failure_code"] != "card_declined" || failed[0]["decline_code"] != "generic_decline" ||
		failed[0]["failure_message"] != "Your card was declined." {
		t.Fatalf("payment_failed events %v", failed)
	}
	got, err := svc.Cancel(ctx, scope, s.ID())
	if err != nil || got.Status() != checkout.StatusCanceled {
		t.Fatalf("cancel: %v %v", got, err)
	}
	canceled := eventsOf(t, db, scope, checkout.EventCanceled)
	if len(canceled) != 1 || canceled[0]["cancellation_reason"] != "customer_canceled" {
		t.Fatalf("canceled events %v", canceled)
	}
	if _, err := svc.Complete(ctx, scope, s.ID(), visa("DE")); !errors.Is(err, checkout.ErrSessionExpired) {
		t.Fatalf("complete after cancel: %v", err)
	}
}
