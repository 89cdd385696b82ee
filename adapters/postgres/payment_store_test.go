package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/fx"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// paymentsOn is a checkout service with payments wired as in production (fees over the ECB
// sample fixture, the sandbox processor with its Postgres journal). The sandbox charges the
// test environment and the environments envs (a test may stand it in for a live processor).
func paymentsOn(db *sqlx.DB, clocks ports.Clocks, envs ...core.Environment) *checkout.Service {
	svc, _ := chargeOn(db, checkoutUoW(db), clocks, core.SystemClock{}, sandboxes(db, envs...))
	return svc
}

// sandboxes is the sandbox processor, with its Postgres journal, for the test environment and
// envs.
func sandboxes(db *sqlx.DB, envs ...core.Environment) map[core.Environment]ports.Processor {
	procs := map[core.Environment]ports.Processor{}
	for _, env := range append(envs, core.EnvTest) {
		procs[env] = sandbox.NewWithJournal(postgres.NewSandboxJournal(db))
	}
	return procs
}

// chargeOn is checkout wired as in production over uow: the charge protocol of payments with
// checkout's payable kind, fees over the ECB sample fixture, the processors procs, the attempts'
// wall clock wall. It returns the service and its charger (chargerFor finds it again).
func chargeOn(db *sqlx.DB, uow ports.UnitOfWorkOf[checkout.Tx], clocks ports.Clocks, wall core.Clock, procs map[core.Environment]ports.Processor) (*checkout.Service, *payments.Charger) {
	kind, err := checkout.BindPayableKind(uow)
	if err != nil {
		panic(err)
	}
	ch, err := payments.NewCharger(payments.ChargerDeps{Fees: payments.NewFeeCalculator(payments.DefaultFeeSchedule(), fx.NewSample()),
		Processors: procs, Attempts: postgres.NewChargeAttemptStore(db), Wall: wall, Kinds: []payments.Kind{kind}})
	if err != nil {
		panic(err)
	}
	svc, err := checkout.NewService(checkout.Deps{Store: postgres.NewSessionStore(db), UoW: uow, Prices: noPrices{}, Clocks: clocks,
		CheckoutBaseURL: "https://pay.example.test", Charger: ch, Merchants: namedMerchant{}})
	if err != nil {
		panic(err)
	}
	chargers.Store(svc, ch)
	return svc, ch
}

// chargers maps each service chargeOn built to its charger.
var chargers sync.Map

// chargerFor is the charger of a service chargeOn built.
func chargerFor(svc *checkout.Service) *payments.Charger {
	ch, ok := chargers.Load(svc)
	if !ok {
		panic("chargerFor: not a service of chargeOn")
	}
	return ch.(*payments.Charger)
}

// checkoutUoW is the unit of work the wiring gives checkout: the one transaction type, seen
// as checkout.Tx.
func checkoutUoW(db *sqlx.DB) ports.UnitOfWorkOf[checkout.Tx] {
	return postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) checkout.Tx { return tx })
}

var payNow = time.Date(2026, 5, 1, 8, 30, 0, 0, time.UTC)

// Sandbox cards (D6): 4242… is issued in the US (non-EEA), 4000002760000008 in DE (EEA).
const (
	visaUS = "4242424242424242"
	visaDE = "4000002760000008"
)

// pay confirms s through the browser API's use case with a card number or an IBAN.
func pay(ctx context.Context, svc *checkout.Service, s *checkout.Session, source string) (*checkout.ConfirmResult, error) {
	in := card(source)
	if len(source) == 22 {
		in = checkout.ConfirmInput{Method: ports.MethodSEPADebit, SEPA: &ports.SEPADetails{IBAN: source, AccountHolder: "Grace Hopper"}}
	}
	return svc.Confirm(ctx, s.ID(), s.ClientSecret(), in)
}

// mustPay is pay that must complete the session; it returns the session.
func mustPay(t *testing.T, svc *checkout.Service, s *checkout.Session, source string) *checkout.Session {
	t.Helper()
	res, err := pay(context.Background(), svc, s, source)
	if err != nil {
		t.Fatal(err)
	}
	if res.Session.Status() != checkout.StatusComplete {
		t.Fatalf("%s: session %s", source, res.Session.Status())
	}
	return res.Session
}

func eventsOf(t *testing.T, db *sqlx.DB, scope core.Scope, typ core.EventType) []map[string]any {
	t.Helper()
	var raw []string
	if err := db.Select(&raw, `SELECT object::text FROM events WHERE merchant_id = $1 AND environment = $2 AND type = $3 ORDER BY created, id`,
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

func TestConfirmRoundTripAndPayloads(t *testing.T) {
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
	done := mustPay(t, svc, s, visaUS)
	p := done.Payment()
	// 2500 EUR cents, non-EEA: round(2500 × 2.8%) + 25 = 95.
	if p.Fee().ServiceFeeEUR != 95 || p.Fee().ServiceFeeChargeCurrency != 95 || !p.Fee().RateDate.Equal(ports.DateOf(payNow)) || p.Fee().Rate != "1" {
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
		AvailableAt   time.Time
		Rate          string
	}
	if err := db.QueryRow(`SELECT card_exp_month, card_exp_year, processor_ref, settles_at IS NULL, available_at, fee_rate
		FROM payments WHERE id = $1`, p.ID()).
		Scan(&exp.Month, &exp.Year, &exp.Ref, &exp.SettlesAtNull, &exp.AvailableAt, &exp.Rate); err != nil {
		t.Fatal(err)
	}
	if exp.Month != 11 || exp.Year != 2031 || !strings.HasPrefix(exp.Ref, "sbx_ch_card_ok_") || !exp.SettlesAtNull ||
		!exp.AvailableAt.Equal(payNow.Add(payments.FundsDelay)) || exp.Rate != "1" {
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

func TestConfirmSEPAStoresSettlement(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	ctx := context.Background()
	s := createSession(t, svc, scope)
	at := payNow.Add(sandbox.SettleDelay)
	res, err := pay(ctx, svc, s, "DE89370400440532013000")
	if err != nil || res.Status != checkout.ConfirmProcessing {
		t.Fatal(res, err)
	}
	done := res.Session
	if done.Payment().Status() != payments.StatusProcessing {
		t.Fatalf("status %s", done.Payment().Status())
	}
	if n := countRows(t, db, `SELECT count(*) FROM payments WHERE status = 'processing' AND settles_at = $1
		AND sepa_last4 = '3000' AND sepa_country = 'DE' AND card_brand IS NULL AND available_at IS NULL`, at); n != 1 {
		t.Fatalf("%d settling rows", n)
	}
	pending := eventsOf(t, db, scope, checkout.EventAsyncPaymentPending)
	if len(pending) != 1 || pending[0]["payment"].(map[string]any)["status"] != "processing" {
		t.Fatalf("pending events %v", pending)
	}
	// D6 as amended: checkout.session.completed fires once at confirmation, with the
	// processing payment; the async outcome event follows at settlement.
	completed := eventsOf(t, db, scope, checkout.EventCompleted)
	if len(completed) != 1 || completed[0]["payment"].(map[string]any)["status"] != "processing" {
		t.Fatalf("completed events %v", completed)
	}
}

func TestConfirmExactlyOnceUnderConcurrency(t *testing.T) {
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
			_, errs[i] = pay(context.Background(), svc, s, visaDE)
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, checkout.ErrSessionExpired):
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

// The crash-safety test of issue 10 §2 on Postgres: the outcome's transaction fails after the
// charge was made (a stray payment makes the insert fail, as a crash before the commit would
// lose it). Nothing of the outcome is written, the session stays open with the attempt in
// flight (it neither expires nor takes a second charge), and the charge-attempt sweep, once
// the grace has passed on the wall clock, asks the sandbox for the attempt's key and applies the
// outcome exactly once: one payment, one checkout.session.completed, however often it runs.
func TestALostOutcomeIsAppliedOnceByTheSweep(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	wall := &settableWall{t: time.Now()}
	svc, ch := chargeOn(db, checkoutUoW(db), fixedClocks{payNow}, wall, sandboxes(db))
	ctx := context.Background()
	s := createSession(t, svc, scope)
	if _, err := db.Exec(`INSERT INTO payments (id, merchant_id, environment, session_id, amount, currency, status,
		payment_method, fee_service_eur, fee_psp_eur, fee_service_charge_currency, fee_currency, fee_rate_date,
		customer_name, customer_email, processor_ref, created, payable_kind, payable_key)
		VALUES ('py_stray', $1, $2, $3, 2500, 'EUR', 'succeeded', 'sepa_debit', 35, 20, 35, 'EUR', '2026-05-01',
		'x', 'x@example.com', 'ref', now(), 'checkout_session', $3)`, scope.MerchantID, string(scope.Env), s.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := pay(ctx, svc, s, visaDE); !errors.Is(err, payments.ErrPaymentExists) {
		t.Fatalf("want ErrPaymentExists, got %v", err)
	}
	var st struct {
		Status   string  `db:"status"`
		Charging *string `db:"charging_attempt"`
	}
	if err := db.Get(&st, `SELECT status, charging_attempt FROM checkout_sessions WHERE id = $1`, s.ID()); err != nil ||
		st.Status != "open" || st.Charging == nil || *st.Charging != s.ID()+":1" {
		t.Fatalf("session %+v %v", st, err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM events WHERE merchant_id = $1`, scope.MerchantID); c != 0 {
		t.Fatalf("%d events after a rolled-back outcome", c)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1 AND status = 'pending'`, s.ID()); c != 1 {
		t.Fatalf("%d pending attempts", c)
	}
	// The expiry sweep leaves a session being charged alone, however late it is.
	if n, err := svc.ProcessDue(ctx, &scope, payNow.Add(48*time.Hour)); err != nil || n != 0 {
		t.Fatalf("expiry sweep: %d %v", n, err)
	}

	if _, err := db.Exec(`DELETE FROM payments WHERE id = 'py_stray'`); err != nil {
		t.Fatal(err)
	}
	sw, err := payments.NewAttemptSweeper(ch)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := sw.ProcessDue(ctx, nil, payNow); err != nil || n != 0 {
		t.Fatalf("within the grace: %d %v", n, err)
	}
	wall.add(payments.AttemptGrace + time.Second)
	var wg sync.WaitGroup
	resolved := make([]int, 4)
	for i := range resolved {
		wg.Go(func() {
			n, err := sw.ProcessDue(ctx, &scope, payNow)
			if err != nil {
				t.Error(err)
			}
			resolved[i] = n
		})
	}
	wg.Wait()
	if total := resolved[0] + resolved[1] + resolved[2] + resolved[3]; total != 1 {
		t.Fatalf("resolved %v, want 1 in all", resolved)
	}
	if c := countRows(t, db, `SELECT count(*) FROM payments WHERE session_id = $1`, s.ID()); c != 1 {
		t.Fatalf("%d payments", c)
	}
	if c := len(eventsOf(t, db, scope, checkout.EventCompleted)); c != 1 {
		t.Fatalf("%d completed events", c)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1 AND status = 'applied' AND outcome = 'succeeded'`, s.ID()); c != 1 {
		t.Fatalf("%d applied attempts", c)
	}
	got, err := svc.Get(ctx, scope, s.ID())
	if err != nil || got.Status() != checkout.StatusComplete || got.Buyer().Charging != "" {
		t.Fatalf("session %v %v", got, err)
	}
}

// settableWall is a wall clock a test moves.
type settableWall struct {
	mu sync.Mutex
	t  time.Time
}

func (w *settableWall) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.t
}

func (w *settableWall) add(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t = w.t.Add(d)
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
	done := mustPay(t, svc, s, visaDE)
	ps := postgres.NewPaymentStore(db)
	for _, sc := range []core.Scope{other, live} {
		if _, err := ps.Get(ctx, sc, done.Payment().ID()); !errors.Is(err, payments.ErrNotFound) {
			t.Errorf("payment get under %v: %v", sc, err)
		}
		if _, err := ps.GetBySession(ctx, sc, s.ID()); !errors.Is(err, payments.ErrNotFound) {
			t.Errorf("payment by session under %v: %v", sc, err)
		}
	}
	if p, err := ps.GetBySession(ctx, scope, s.ID()); err != nil || p.ID() != done.Payment().ID() {
		t.Fatalf("own payment by session: %v", err)
	}
}

func TestDeclineAndCancelOnPostgres(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	ctx := context.Background()
	s := createSession(t, svc, scope)
	var de *checkout.DeclineError
	if _, err := pay(ctx, svc, s, "4000000000000002"); !errors.As(err, &de) || de.DeclineCode != ports.DeclineGenericDecline {
		t.Fatalf("decline: %v", err)
	}
	failed := eventsOf(t, db, scope, payments.EventPaymentIntentPaymentFailed)
	if len(failed) != 1 || failed[0]["failure_code"] != "card_declined" || failed[0]["decline_code"] != "generic_decline" ||
		failed[0]["session_id"] != s.ID() {
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
	if _, err := pay(ctx, svc, s, visaDE); !errors.Is(err, checkout.ErrSessionExpired) {
		t.Fatalf("confirm after cancel: %v", err)
	}
}

// A confirmation in flight when the process died (its outcome never committed) does not block
// the session for the sweep's grace: the next confirmation that meets an attempt older than
// payments.AttemptGrace resolves it at once by lookup. Here the first charge succeeded at the
// sandbox, so the session completes with it, and the buyer's second confirmation answers at
// once (session_expired: the session is paid) instead of 422 payment_in_progress for minutes.
func TestAStaleAttemptIsResolvedByTheNextConfirmation(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	wall := &settableWall{t: time.Now()}
	svc, _ := chargeOn(db, checkoutUoW(db), fixedClocks{payNow}, wall, sandboxes(db))
	ctx := context.Background()
	s := createSession(t, svc, scope)
	if _, err := db.Exec(`INSERT INTO payments (id, merchant_id, environment, session_id, amount, currency, status,
		payment_method, fee_service_eur, fee_psp_eur, fee_service_charge_currency, fee_currency, fee_rate_date,
		customer_name, customer_email, processor_ref, created, payable_kind, payable_key)
		VALUES ('py_stray', $1, $2, $3, 2500, 'EUR', 'succeeded', 'sepa_debit', 35, 20, 35, 'EUR', '2026-05-01',
		'x', 'x@example.com', 'ref', now(), 'checkout_session', $3)`, scope.MerchantID, string(scope.Env), s.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := pay(ctx, svc, s, visaDE); !errors.Is(err, payments.ErrPaymentExists) {
		t.Fatalf("want the lost outcome, got %v", err)
	}
	if _, err := db.Exec(`DELETE FROM payments WHERE id = 'py_stray'`); err != nil {
		t.Fatal(err)
	}
	wall.add(payments.AttemptGrace + time.Second)
	began := time.Now()
	if _, err := pay(ctx, svc, s, visaDE); !errors.Is(err, checkout.ErrSessionExpired) {
		t.Fatalf("the next confirmation: %v", err)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("the next confirmation answered after %v", d)
	}
	got, err := svc.Get(ctx, scope, s.ID())
	if err != nil || got.Status() != checkout.StatusComplete || got.Buyer().Charging != "" {
		t.Fatalf("session %v %v", got, err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM payments WHERE session_id = $1`, s.ID()); c != 1 {
		t.Fatalf("%d payments", c)
	}
	if c := countRows(t, db, `SELECT count(*) FROM sandbox_charges WHERE merchant_id = $1`, scope.MerchantID); c != 1 {
		t.Fatalf("%d processor charges, want the first only", c)
	}
}
