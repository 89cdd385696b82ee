package payments

import (
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

var (
	testScope = core.Scope{MerchantID: "mer_test", Env: core.EnvTest}
	t0        = time.Date(2026, 11, 18, 10, 0, 0, 0, time.UTC)
	sessionID = core.NewID(core.PrefixSession)
)

func validParams() NewPaymentParams {
	ref := "order-1001"
	return NewPaymentParams{
		Scope: testScope, PayableKind: "checkout_session", SessionID: &sessionID, Amount: 10000, Currency: "USD", Status: StatusSucceeded,
		Method: MethodCard, Card: &Card{Brand: "visa", Last4: "4242", Country: "us", Funding: "credit"},
		Fee:      Fee{ServiceFeeEUR: 266, PSPFeeEUR: 199, ServiceFeeChargeCurrency: 309, Currency: "USD", RateDate: fixtureDay},
		Customer: Customer{Name: "Ada Lovelace", Email: "ada@example.com"}, Reference: &ref,
		Metadata: map[string]string{"order": "1001"}, Created: t0,
	}
}

func mustPayment(t *testing.T, edit func(*NewPaymentParams)) *Payment {
	t.Helper()
	p := validParams()
	if edit != nil {
		edit(&p)
	}
	pay, err := NewPayment(p)
	if err != nil {
		t.Fatal(err)
	}
	return pay
}

func TestNewPayment(t *testing.T) {
	t.Parallel()
	p := mustPayment(t, nil)
	if !core.HasIDShape(p.ID(), core.PrefixPayment) {
		t.Errorf("id %q", p.ID())
	}
	if p.Status() != StatusSucceeded || p.AmountRefunded() != 0 || p.AmountRefundable() != 10000 ||
		p.InvoiceID() != nil || *p.SessionID() != sessionID || p.Card().Country != "US" ||
		p.PaymentMethod() != MethodCard || p.Fee().ServiceFeeChargeCurrency != 309 {
		t.Errorf("%+v", p.Snapshot())
	}
	// Getters hand out copies.
	p.Metadata()["order"] = "x"
	p.Card().Last4 = "0000"
	if p.Metadata()["order"] != "1001" || p.Card().Last4 != "4242" {
		t.Error("state leaked through a getter")
	}
	sepa := mustPayment(t, func(p *NewPaymentParams) {
		p.Status, p.Method, p.Card, p.Currency, p.Fee.Currency = StatusProcessing, MethodSEPADebit, nil, "EUR", "EUR"
	})
	if sepa.Status() != StatusProcessing || sepa.Card() != nil {
		t.Errorf("%+v", sepa.Snapshot())
	}
}

func TestNewPaymentRefuses(t *testing.T) {
	t.Parallel()
	inv := "in_1"
	bad := map[string]func(*NewPaymentParams){
		"no scope":             func(p *NewPaymentParams) { p.Scope = core.Scope{} },
		"no session":           func(p *NewPaymentParams) { p.SessionID = nil },
		"session and invoice":  func(p *NewPaymentParams) { p.InvoiceID = &inv },
		"bad session id":       func(p *NewPaymentParams) { s := "cs_x"; p.SessionID = &s },
		"starts failed":        func(p *NewPaymentParams) { p.Status = StatusFailed },
		"starts refunded":      func(p *NewPaymentParams) { p.Status = StatusRefunded },
		"unknown method":       func(p *NewPaymentParams) { p.Method = "klarna" },
		"card without details": func(p *NewPaymentParams) { p.Card = nil },
		"sepa with card":       func(p *NewPaymentParams) { p.Method = MethodSEPADebit },
		"fee currency":         func(p *NewPaymentParams) { p.Fee.Currency = "EUR" },
		"negative fee":         func(p *NewPaymentParams) { p.Fee.PSPFeeEUR = -1 },
		"no created":           func(p *NewPaymentParams) { p.Created = time.Time{} },
		"unsupported currency": func(p *NewPaymentParams) { p.Currency, p.Fee.Currency = "XXX", "XXX" },
		"amount too small":     func(p *NewPaymentParams) { p.Amount = 249 },
		"amount too large":     func(p *NewPaymentParams) { p.Amount = core.MaxAmount + 1 },
		"no brand":             func(p *NewPaymentParams) { p.Card.Brand = "" },
		"bad last4":            func(p *NewPaymentParams) { p.Card.Last4 = "42a2" },
		"bad country":          func(p *NewPaymentParams) { p.Card.Country = "USA" },
		"bad funding":          func(p *NewPaymentParams) { p.Card.Funding = "charge" },
	}
	for name, edit := range bad {
		p := validParams()
		c := *p.Card
		p.Card = &c
		edit(&p)
		if _, err := NewPayment(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	p := mustPayment(t, nil)
	if err := p.OpenDispute(); err != nil {
		t.Fatal(err)
	}
	snap := p.Snapshot()
	back := RehydratePayment(snap)
	if !reflect.DeepEqual(back.Snapshot(), snap) {
		t.Fatalf("round trip:\n%+v\n%+v", back.Snapshot(), snap)
	}
	if err := back.WinDispute(); err != nil || back.Status() != StatusSucceeded {
		t.Fatalf("rehydrated dispute: %v %s", err, back.Status())
	}
	snap.Metadata["order"] = "changed"
	if back.Metadata()["order"] != "1001" {
		t.Error("rehydrate shares the snapshot's map")
	}
}

// state prepares a payment in a given situation through its own transitions.
type state struct {
	name  string
	setup func(*testing.T, *Payment)
}

func step(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func refund(amount int64) func(*testing.T, *Payment) {
	return func(t *testing.T, p *Payment) { _, err := p.Refund(amount, t0); step(t, err) }
}

var (
	stProcessing      = state{"processing", nil}
	stSucceeded       = state{"succeeded", func(t *testing.T, p *Payment) { step(t, p.Succeed()) }}
	stFailed          = state{"failed", func(t *testing.T, p *Payment) { step(t, p.Fail("insufficient_funds", "Insufficient funds.")) }}
	stPartial         = state{"partially_refunded", func(t *testing.T, p *Payment) { step(t, p.Succeed()); refund(4000)(t, p) }}
	stRefunded        = state{"refunded", func(t *testing.T, p *Payment) { step(t, p.Succeed()); refund(10000)(t, p) }}
	stDisputed        = state{"disputed", func(t *testing.T, p *Payment) { step(t, p.Succeed()); step(t, p.OpenDispute()) }}
	stDisputedPartial = state{"disputed from partial", func(t *testing.T, p *Payment) { stPartial.setup(t, p); step(t, p.OpenDispute()) }}
	stDisputeLost     = state{"dispute lost", func(t *testing.T, p *Payment) { stDisputed.setup(t, p); step(t, p.LoseDispute()) }}
	stDisputeWon      = state{"dispute won", func(t *testing.T, p *Payment) { stDisputed.setup(t, p); step(t, p.WinDispute()) }}
	allStates         = []state{stProcessing, stSucceeded, stFailed, stPartial, stRefunded, stDisputed, stDisputedPartial, stDisputeLost, stDisputeWon}
)

// newAt builds a processing payment (so every state is reachable) and brings it to st.
func newAt(t *testing.T, st state) *Payment {
	t.Helper()
	p := mustPayment(t, func(p *NewPaymentParams) { p.Status = StatusProcessing })
	if st.setup != nil {
		st.setup(t, p)
	}
	return p
}

// TestTransitions tries every transition from every state: the allowed ones reach the
// documented state, the refused ones answer their domain error and change nothing.
func TestTransitions(t *testing.T) {
	t.Parallel()
	type outcome struct {
		status Status
		err    error
	}
	refused := func(err error) outcome { return outcome{err: err} }
	transitions := []struct {
		name string
		do   func(*Payment) error
		want map[string]outcome
	}{
		{"succeed", (*Payment).Succeed, map[string]outcome{
			"processing": {status: StatusSucceeded},
			"*":          refused(ErrPaymentNotProcessing),
		}},
		{"fail", func(p *Payment) error { return p.Fail("generic_decline", "Declined.") }, map[string]outcome{
			"processing": {status: StatusFailed},
			"*":          refused(ErrPaymentNotProcessing),
		}},
		{"open dispute", (*Payment).OpenDispute, map[string]outcome{
			"succeeded":          {status: StatusDisputed},
			"partially_refunded": {status: StatusDisputed},
			"dispute won":        {status: StatusDisputed},
			"*":                  refused(ErrChargeNotDisputable),
		}},
		{"win dispute", (*Payment).WinDispute, map[string]outcome{
			"disputed":              {status: StatusSucceeded},
			"disputed from partial": {status: StatusPartiallyRefunded},
			"*":                     refused(ErrDisputeNotOpen),
		}},
		{"lose dispute", (*Payment).LoseDispute, map[string]outcome{
			"disputed":              {status: StatusDisputed},
			"disputed from partial": {status: StatusDisputed},
			"*":                     refused(ErrDisputeNotOpen),
		}},
		{"partial refund", func(p *Payment) error { _, err := p.Refund(1000, t0.Add(time.Hour)); return err }, map[string]outcome{
			"succeeded":             {status: StatusPartiallyRefunded},
			"partially_refunded":    {status: StatusPartiallyRefunded},
			"dispute won":           {status: StatusPartiallyRefunded},
			"processing":            refused(ErrChargeNotRefundable),
			"failed":                refused(ErrChargeNotRefundable),
			"refunded":              refused(ErrChargeNotRefundable),
			"disputed":              refused(ErrChargeDisputed),
			"disputed from partial": refused(ErrChargeDisputed),
			"dispute lost":          refused(ErrChargeDisputed),
		}},
		{"refund of the rest", func(p *Payment) error { _, err := p.Refund(p.AmountRefundable(), t0.Add(time.Hour)); return err }, map[string]outcome{
			"succeeded":             {status: StatusRefunded},
			"partially_refunded":    {status: StatusRefunded},
			"dispute won":           {status: StatusRefunded},
			"processing":            refused(ErrChargeNotRefundable),
			"failed":                refused(ErrChargeNotRefundable),
			"refunded":              refused(ErrChargeNotRefundable),
			"disputed":              refused(ErrChargeDisputed),
			"disputed from partial": refused(ErrChargeDisputed),
			"dispute lost":          refused(ErrChargeDisputed),
		}},
	}
	for _, tr := range transitions {
		for _, st := range allStates {
			t.Run(tr.name+"/from "+st.name, func(t *testing.T) {
				t.Parallel()
				want, ok := tr.want[st.name]
				if !ok {
					want = tr.want["*"]
				}
				p := newAt(t, st)
				before := p.Snapshot()
				err := tr.do(p)
				if want.err != nil {
					if !errors.Is(err, want.err) {
						t.Fatalf("got %v, want %v", err, want.err)
					}
					if !reflect.DeepEqual(p.Snapshot(), before) {
						t.Fatalf("a refused transition changed the payment:\n%+v\n%+v", p.Snapshot(), before)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if p.Status() != want.status {
					t.Fatalf("status %s, want %s", p.Status(), want.status)
				}
			})
		}
	}
}

func TestDisputeLifecycle(t *testing.T) {
	t.Parallel()
	p := newAt(t, stDisputedPartial)
	if !p.DisputeOpen() || p.StatusBeforeDispute() != StatusPartiallyRefunded {
		t.Fatalf("open %v, before %s", p.DisputeOpen(), p.StatusBeforeDispute())
	}
	step(t, p.LoseDispute())
	if p.Status() != StatusDisputed || p.DisputeOpen() || !p.DisputeLost() || p.StatusBeforeDispute() != "" {
		t.Fatalf("%+v", p.Snapshot())
	}
	if err := p.OpenDispute(); !errors.Is(err, ErrChargeNotDisputable) {
		t.Fatalf("second dispute after a loss: %v", err)
	}
	if p.AmountRefunded() != 4000 {
		t.Fatal("a dispute changed the refunded amount")
	}
}

func TestFail(t *testing.T) {
	t.Parallel()
	p := newAt(t, stFailed)
	if p.FailureCode() == nil || *p.FailureCode() != "insufficient_funds" || *p.FailureMessage() != "Insufficient funds." {
		t.Fatalf("%+v", p.Snapshot())
	}
}

func TestRefundRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		amounts []int64 // earlier refunds, then the one under test
		at      time.Time
		wantErr error
		status  Status
		total   int64
	}{
		{name: "partial", amounts: []int64{2500}, at: t0, status: StatusPartiallyRefunded, total: 2500},
		{name: "partials up to the whole", amounts: []int64{2500, 2500, 5000}, at: t0, status: StatusRefunded, total: 10000},
		{name: "full at once", amounts: []int64{10000}, at: t0, status: StatusRefunded, total: 10000},
		{name: "last second of the window", amounts: []int64{100}, at: t0.Add(RefundWindow), status: StatusPartiallyRefunded, total: 100},
		{name: "window passed", amounts: []int64{100}, at: t0.Add(RefundWindow + time.Second), wantErr: ErrRefundWindowPassed},
		{name: "above the amount", amounts: []int64{10001}, at: t0, wantErr: ErrRefundExceedsCaptured},
		{name: "above what remains", amounts: []int64{6000, 4001}, at: t0, wantErr: ErrRefundExceedsCaptured},
		{name: "zero", amounts: []int64{0}, at: t0, wantErr: ErrRefundAmountInvalid},
		{name: "negative", amounts: []int64{-5}, at: t0, wantErr: ErrRefundAmountInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := mustPayment(t, nil)
			n := len(tc.amounts)
			for _, a := range tc.amounts[:n-1] {
				if _, err := p.Refund(a, t0); err != nil {
					t.Fatal(err)
				}
			}
			before := p.Snapshot()
			out, err := p.Refund(tc.amounts[n-1], tc.at)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("got %v, want %v", err, tc.wantErr)
				}
				if !reflect.DeepEqual(p.Snapshot(), before) {
					t.Fatal("a refused refund changed the payment")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Status() != tc.status || p.AmountRefunded() != tc.total || out.AmountRefunded != tc.total ||
				out.Amount != tc.amounts[n-1] || out.FullyRefunded != (tc.status == StatusRefunded) {
				t.Fatalf("status %s total %d outcome %+v", p.Status(), p.AmountRefunded(), out)
			}
		})
	}
}

// The documented error identities (interface 7, D9) and their HTTP statuses by type.
func TestRefundErrorIdentities(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    *core.Error
		typ    core.ErrorType
		code   string
		status int
	}{
		{ErrChargeDisputed, core.TypeInvalidState, "charge_disputed", http.StatusUnprocessableEntity},
		{ErrRefundWindowPassed, core.TypeInvalidState, "charge_refund_window_passed", http.StatusUnprocessableEntity},
		{ErrRefundExceedsCaptured, core.TypeAmountTooLarge, "refund_exceeds_captured", http.StatusBadRequest},
	}
	for _, tc := range cases {
		if tc.err.Type != tc.typ || tc.err.Code != tc.code {
			t.Errorf("%v: want %s/%s", tc.err, tc.typ, tc.code)
		}
	}
	p := mustPayment(t, nil)
	_, err := p.Refund(20000, t0)
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Param != "amount" || ce.Message == ErrRefundExceedsCaptured.Message {
		t.Fatalf("%#v", err)
	}
	if ce.Message != "The refund of 200.00 USD is larger than the 100.00 USD that remains to be refunded." {
		t.Errorf("message %q", ce.Message)
	}
}

// Partial refunds give the fee back pro rata and add up to exactly the whole fee.
func TestRefundReversesTheFeeProRata(t *testing.T) {
	t.Parallel()
	p := mustPayment(t, nil) // USD 100.00, fee 266 / 199 / 309
	var sum Fee
	steps := []struct {
		amount              int64
		service, psp, inCur int64
	}{
		// 1/3 of 10000 = 3333: 266 × 0.3333 = 88.66 → 89; 199 × 0.3333 = 66.33 → 66;
		// 309 × 0.3333 = 102.99 → 103.
		{3333, 89, 66, 103},
		// running 6666: 177.32 → 177 (−89 = 88); 132.65 → 133 (−66 = 67); 205.98 → 206 (−103 = 103).
		{3333, 88, 67, 103},
		// the rest: 266 − 177 = 89; 199 − 133 = 66; 309 − 206 = 103.
		{3334, 89, 66, 103},
	}
	for i, s := range steps {
		out, err := p.Refund(s.amount, t0)
		if err != nil {
			t.Fatal(err)
		}
		f := out.FeeReversed
		if f.ServiceFeeEUR != s.service || f.PSPFeeEUR != s.psp || f.ServiceFeeChargeCurrency != s.inCur || f.Currency != "USD" {
			t.Errorf("step %d: %+v", i, f)
		}
		sum.ServiceFeeEUR += f.ServiceFeeEUR
		sum.PSPFeeEUR += f.PSPFeeEUR
		sum.ServiceFeeChargeCurrency += f.ServiceFeeChargeCurrency
	}
	if sum.ServiceFeeEUR != 266 || sum.PSPFeeEUR != 199 || sum.ServiceFeeChargeCurrency != 309 {
		t.Fatalf("reversals add up to %+v", sum)
	}
}

// The status filter's error message lists exactly the states Status.Valid accepts.
func TestStatusListMatchesValid(t *testing.T) {
	seen := map[Status]bool{}
	for _, s := range statuses {
		if !s.Valid() || seen[s] {
			t.Errorf("%q in the list: valid %v, repeated %v", s, s.Valid(), seen[s])
		}
		seen[s] = true
	}
	for _, s := range []Status{StatusProcessing, StatusSucceeded, StatusFailed, StatusPartiallyRefunded, StatusRefunded, StatusDisputed} {
		if !seen[s] {
			t.Errorf("%q missing from the list", s)
		}
	}
	if Status("pending").Valid() {
		t.Error("pending accepted")
	}
}
