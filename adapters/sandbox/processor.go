// Package sandbox is the test-environment payment processor (D6): it moves no money and
// answers from the well-known test card numbers and IBANs.
//
// Cards (any expiry not in the past, any CVC of the right length or none):
//
//	4242424242424242  succeeded
//	4000000000000002  failed generic_decline
//	4000000000009995  failed insufficient_funds
//	4000000000009987  failed lost_card
//	4000000000000069  failed expired_card
//	4000000000000127  failed incorrect_cvc
//	4000002760003184  requires_action (3-D Secure) on every on-session charge, and
//	                  CompleteAction approve → succeeded, refuse → failed authentication_failed;
//	                  off-session (renewals) → failed authentication_required. Issued in DE.
//	4000000000000259  succeeded, then a dispute (reason "fraudulent") opens DisputeDelay later
//	4000000000000077  succeeded with FundsAvailableNow
//	4000000000000341  (extra, for dunning tests) saving with amount 0 succeeds; every charge
//	                  of it fails generic_decline
//	any other Luhn-valid 12–19 digit number: succeeded
//	not 12–19 digits or Luhn-invalid: failed incorrect_number
//	expiry month not 1–12: invalid_expiry_month; year not YY/YYYY or over 50 years ahead:
//	invalid_expiry_year; past the end of the expiry month: expired_card
//	CVC given but not 3 digits (4 for amex): invalid_cvc
//
// Checks run in that order: number, expiry, CVC, then the number's own behaviour.
// Card country: 400000CCC… numbers are issued in the country with ISO numeric code CCC (see
// issuerCountries: 4000002760003184 is DE, so an EEA card; 4000008260000000 is GB); all others
// in DefaultCardCountry (US). Funding: credit, except 4000056655665556 and 5200828282828210
// (debit) and 5105105105105100 (prepaid).
//
// SEPA Direct Debit (EUR only): a valid IBAN of a SEPA country gives processing with
// SettlesAt = now + SettleDelay; Settle then answers succeeded, except for
// DE62370400440532013001 which settles failed insufficient_funds (DE89370400440532013000 is
// the documented succeeding one). An invalid IBAN fails at once with invalid_iban. With amount
// 0 and SavePaymentMethod (a mandate for a trial) it succeeds at once.
//
// ProcessorRef and PaymentMethodRef carry what later calls need (see ref.go), so CompleteAction
// and Settle need no state, and the module's state machine, not the sandbox, prevents a second
// CompleteAction or Settle from mattering. The one thing the sandbox remembers is its answer to
// each charge with an idempotency key (a Journal), as a live processor would: a retried Charge
// answers the same, and Lookup tells what became of a charge whose outcome Kassa failed to
// record.
package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Delays of the sandbox's asynchronous outcomes, short so that the test clock (D12) can move
// past them in one advance.
const (
	// SettleDelay is how long a SEPA charge stays processing.
	SettleDelay = 2 * time.Minute
	// DisputeDelay is how long after success the dispute of 4000000000000259 opens.
	DisputeDelay = time.Minute
)

// DisputeReason is the reason of the sandbox's disputes.
const DisputeReason = "fraudulent"

// Processor is the sandbox implementation of ports.Processor.
type Processor struct {
	journal Journal
}

// New returns the sandbox processor with an in-memory journal (tests, single-process runs).
func New() *Processor { return &Processor{journal: NewMemoryJournal()} }

// NewWithJournal returns the sandbox processor remembering its charges in j (the server gives
// it the Postgres journal, so that Lookup answers across restarts and processes).
func NewWithJournal(j Journal) *Processor { return &Processor{journal: j} }

var _ ports.Processor = (*Processor)(nil)

// Charge implements ports.Processor.
func (p *Processor) Charge(ctx context.Context, req ports.ChargeRequest, now time.Time) (ports.ChargeResult, error) {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return ports.ChargeResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return ports.ChargeResult{}, err
	}
	if err := checkRequest(req); err != nil {
		return ports.ChargeResult{}, err
	}
	now = now.UTC().Truncate(time.Second)
	// The answer is computed first and Remember keeps the first one stored under the key, so a
	// retried key answers what its first call answered without a read before the write (one
	// round trip to the journal, not two).
	var res ports.ChargeResult
	var err error
	switch {
	case req.PaymentMethodRef != "":
		res, err = chargeSaved(req, now)
	case req.Method == ports.MethodCard:
		res = chargeCard(req, now)
	default:
		res = chargeSEPA(req, now)
	}
	if req.IdempotencyKey == "" || p.journal == nil {
		return res, err
	}
	if err != nil {
		// What failed now may have been answered before under this key (a saved method
		// detached since): the first answer stands.
		if old, ok, rerr := p.journal.Recall(ctx, req.Scope, req.IdempotencyKey); rerr != nil || ok {
			return old, rerr
		}
		return res, err
	}
	return p.journal.Remember(ctx, req.Scope, req.IdempotencyKey, res)
}

// Lookup implements ports.Processor: the answer the journal kept for the key, or
// ports.ErrChargeUnknown.
func (p *Processor) Lookup(ctx context.Context, scope core.Scope, idempotencyKey string, _ time.Time) (ports.ChargeResult, error) {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return ports.ChargeResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return ports.ChargeResult{}, err
	}
	if p.journal == nil || idempotencyKey == "" {
		return ports.ChargeResult{}, ports.ErrChargeUnknown
	}
	res, ok, err := p.journal.Recall(ctx, scope, idempotencyKey)
	if err != nil {
		return ports.ChargeResult{}, err
	}
	if !ok {
		return ports.ChargeResult{}, ports.ErrChargeUnknown
	}
	return res, nil
}

// Refund implements ports.Refunder: the sandbox gives back any positive amount of a charge it
// knows the reference shape of, at once; a retried key answers what its first call answered.
// Kassa checks the refundable amount itself (the sandbox, like a processor, is the last line,
// not the first).
func (p *Processor) Refund(ctx context.Context, req ports.RefundRequest, _ time.Time) (ports.RefundResult, error) {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return ports.RefundResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return ports.RefundResult{}, err
	}
	switch {
	case req.Amount <= 0, req.ProcessorRef == "", req.IdempotencyKey == "", req.Currency == "":
		return ports.RefundResult{}, fmt.Errorf("%w: amount %d, charge %q, key %q", ports.ErrRefundRequestInvalid,
			req.Amount, req.ProcessorRef, req.IdempotencyKey)
	}
	res := ports.RefundResult{Outcome: ports.RefundSucceeded, ProcessorRef: core.NewID("sbre_")}
	if p.journal == nil {
		return res, nil
	}
	return p.journal.RememberRefund(ctx, req.Scope, req.IdempotencyKey, res)
}

// LookupRefund implements ports.Refunder: the answer the journal kept for the key, or
// ports.ErrRefundUnknown.
func (p *Processor) LookupRefund(ctx context.Context, scope core.Scope, idempotencyKey string, _ time.Time) (ports.RefundResult, error) {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return ports.RefundResult{}, err
	}
	if p.journal == nil || idempotencyKey == "" {
		return ports.RefundResult{}, ports.ErrRefundUnknown
	}
	res, ok, err := p.journal.RecallRefund(ctx, scope, idempotencyKey)
	if err != nil {
		return ports.RefundResult{}, err
	}
	if !ok {
		return ports.RefundResult{}, ports.ErrRefundUnknown
	}
	return res, nil
}

// CompleteAction implements ports.Processor: the buyer's answer on the sandbox 3-D Secure page.
func (p *Processor) CompleteAction(ctx context.Context, processorRef string, approve bool, now time.Time) (ports.ChargeResult, error) {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return ports.ChargeResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return ports.ChargeResult{}, err
	}
	r, err := parseRef(processorRef)
	if err != nil {
		return ports.ChargeResult{}, err
	}
	if r.kind != refCharge || r.method != methodCard || r.scenario != sc3DS {
		return ports.ChargeResult{}, ports.ErrChargeNotActionable
	}
	if !approve {
		return declined(processorRef, r.cardInfo(), ports.DeclineAuthenticationFailed), nil
	}
	res := ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: processorRef, Card: r.cardInfo()}
	if r.save {
		res.PaymentMethodRef = r.savedMethod()
	}
	return res, nil
}

// Settle implements ports.Processor: the outcome of a SEPA charge, final from its SettlesAt on.
func (p *Processor) Settle(ctx context.Context, processorRef string, now time.Time) (ports.ChargeResult, error) {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return ports.ChargeResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return ports.ChargeResult{}, err
	}
	r, err := parseRef(processorRef)
	if err != nil {
		return ports.ChargeResult{}, err
	}
	if r.kind != refCharge || r.method != methodSEPA || r.settles == 0 {
		return ports.ChargeResult{}, ports.ErrChargeNotSettleable
	}
	at := r.settlesAt()
	if now.Before(*at) {
		return ports.ChargeResult{Outcome: ports.OutcomeProcessing, ProcessorRef: processorRef,
			SEPA: r.sepaInfo(), SettlesAt: at}, nil
	}
	if r.scenario == scSEPAFail {
		return declinedDebit(processorRef, r.sepaInfo(), ports.DeclineInsufficientFunds), nil
	}
	res := ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: processorRef, SEPA: r.sepaInfo()}
	if r.save {
		res.PaymentMethodRef = r.savedMethod()
	}
	return res, nil
}

// checkRequest refuses requests no buyer input can produce: the checkout module validates
// before it charges.
func checkRequest(req ports.ChargeRequest) error {
	invalid := func(why string) error { return fmt.Errorf("%w: %s", ports.ErrChargeRequestInvalid, why) }
	if !req.Method.Valid() {
		return invalid("unknown payment method")
	}
	if req.Amount < 0 || (req.Amount == 0 && !req.SavePaymentMethod) {
		return invalid("amount must be positive (0 only to save the payment method)")
	}
	sources := 0
	for _, given := range []bool{req.Card != nil, req.SEPA != nil, req.PaymentMethodRef != ""} {
		if given {
			sources++
		}
	}
	if sources != 1 {
		return invalid("give exactly one of card, sepa and payment method ref")
	}
	if (req.Card != nil && req.Method != ports.MethodCard) || (req.SEPA != nil && req.Method != ports.MethodSEPADebit) {
		return invalid("payment details do not match the method")
	}
	if req.Method == ports.MethodSEPADebit && req.Currency != "EUR" {
		return invalid("sepa_debit charges only EUR")
	}
	return nil
}

func chargeCard(req ports.ChargeRequest, now time.Time) ports.ChargeResult {
	c := req.Card
	failed := ref{kind: refCharge, method: methodCard, scenario: scFailed, nonce: newNonce(req)}
	number, ok := core.NormalizeCardNumber(c.Number)
	if !ok || !core.LuhnValid(number) {
		return declined(failed.String(), nil, ports.DeclineIncorrectNumber)
	}
	brand := core.CardBrand(number)
	failed.brand, failed.last4 = brand, core.Last4(number)
	failed.country, failed.funding = cardCountry(number), cardFundingOf(number)
	if code := expiryDecline(c.ExpMonth, c.ExpYear, now); code != "" {
		return declined(failed.String(), failed.cardInfo(), code)
	}
	failed.expMonth, failed.expYear = c.ExpMonth, mustYear(c.ExpYear)
	if c.CVC != "" {
		want := 3
		if brand == core.BrandAmex {
			want = 4
		}
		if len(c.CVC) != want || !isASCIIDigits(c.CVC) {
			return declined(failed.String(), failed.cardInfo(), ports.DeclineInvalidCVC)
		}
	}
	tc, special := testCards[number]
	if !special {
		tc = testCard{scenario: scOK}
	}
	if tc.scenario == scFailed {
		return declined(failed.String(), failed.cardInfo(), tc.decline)
	}
	r := failed
	r.scenario, r.save = tc.scenario, req.SavePaymentMethod
	return runCard(r, req.Amount, req.OffSession, now)
}

// runCard is the behaviour of a card charge whose details passed: fresh or saved.
func runCard(r ref, amount int64, offSession bool, now time.Time) ports.ChargeResult {
	failed := r
	failed.scenario, failed.save = scFailed, false
	res := ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: r.String(), Card: r.cardInfo()}
	switch r.scenario {
	case sc3DS:
		if offSession {
			return declined(failed.String(), r.cardInfo(), ports.DeclineAuthenticationRequired)
		}
		res.Outcome = ports.OutcomeRequiresAction
		res.Action = &ports.ChargeAction{Kind: ports.ActionThreeDSecure}
		return res
	case scAttachOnly:
		if amount > 0 {
			return declined(failed.String(), r.cardInfo(), ports.DeclineGenericDecline)
		}
	case scDispute:
		if amount > 0 {
			res.Dispute = &ports.DisputeNotice{OpensAt: now.Add(DisputeDelay), Reason: DisputeReason}
		}
	case scInstant:
		res.FundsAvailableNow = amount > 0
	}
	if r.save {
		res.PaymentMethodRef = r.savedMethod()
	}
	return res
}

func chargeSEPA(req ports.ChargeRequest, now time.Time) ports.ChargeResult {
	r := ref{kind: refCharge, method: methodSEPA, scenario: scFailed, nonce: newNonce(req)}
	iban, ok := core.NormalizeIBAN(req.SEPA.IBAN)
	if !ok {
		return declinedDebit(r.String(), nil, ports.DeclineInvalidIBAN)
	}
	r.scenario = scOK
	if sc, special := testIBANs[iban]; special {
		r.scenario = sc
	}
	r.last4, r.country, r.save = core.Last4(iban), iban[:2], req.SavePaymentMethod
	return runSEPA(r, req.Amount, now)
}

// runSEPA starts a SEPA debit of a valid account: processing until SettlesAt; a 0 amount only
// saves the mandate and succeeds at once.
func runSEPA(r ref, amount int64, now time.Time) ports.ChargeResult {
	if amount == 0 {
		return ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: r.String(),
			SEPA: r.sepaInfo(), PaymentMethodRef: r.savedMethod()}
	}
	r.settles = now.Add(SettleDelay).Unix()
	return ports.ChargeResult{Outcome: ports.OutcomeProcessing, ProcessorRef: r.String(),
		SEPA: r.sepaInfo(), SettlesAt: r.settlesAt()}
}

// chargeSaved charges a method saved by an earlier charge (renewals, dunning retries).
func chargeSaved(req ports.ChargeRequest, now time.Time) (ports.ChargeResult, error) {
	pm, err := parseRef(req.PaymentMethodRef)
	if err != nil {
		return ports.ChargeResult{}, err
	}
	want := methodCard
	if req.Method == ports.MethodSEPADebit {
		want = methodSEPA
	}
	if pm.kind != refMethod || pm.method != want {
		return ports.ChargeResult{}, fmt.Errorf("%w: payment method ref is not a saved %s", ports.ErrChargeRequestInvalid, req.Method)
	}
	r := pm
	r.kind, r.nonce, r.save = refCharge, newNonce(req), req.SavePaymentMethod
	var res ports.ChargeResult
	if want == methodSEPA {
		res = runSEPA(r, req.Amount, now)
	} else {
		if !core.ExpiryValid(r.expMonth, r.expYear, now) {
			failed := r
			failed.scenario, failed.save = scFailed, false
			return declined(failed.String(), failed.cardInfo(), ports.DeclineExpiredCard), nil
		}
		res = runCard(r, req.Amount, req.OffSession, now)
	}
	if res.PaymentMethodRef != "" {
		res.PaymentMethodRef = req.PaymentMethodRef // saving a saved method keeps its ref
	}
	return res, nil
}

// expiryDecline is the decline code of an unusable expiry, or "".
func expiryDecline(month, year int, now time.Time) string {
	if month < 1 || month > 12 {
		return ports.DeclineInvalidExpiryMonth
	}
	y, ok := core.NormalizeExpiryYear(year)
	if !ok || y > now.Year()+core.MaxExpiryYearsAhead {
		return ports.DeclineInvalidExpiryYear
	}
	if !core.ExpiryValid(month, y, now) {
		return ports.DeclineExpiredCard
	}
	return ""
}

func mustYear(year int) int {
	y, _ := core.NormalizeExpiryYear(year)
	return y
}

// declined is a failed result of the card charge processorRef.
func declined(processorRef string, card *ports.CardInfo, code string) ports.ChargeResult {
	return ports.ChargeResult{Outcome: ports.OutcomeFailed, ProcessorRef: processorRef, Card: card,
		DeclineCode: code, FailureMessage: declineMessage(false, code)}
}

// declinedDebit is a failed result of the SEPA Direct Debit processorRef, in a debit's words.
func declinedDebit(processorRef string, sepa *ports.SEPAInfo, code string) ports.ChargeResult {
	return ports.ChargeResult{Outcome: ports.OutcomeFailed, ProcessorRef: processorRef, SEPA: sepa,
		DeclineCode: code, FailureMessage: declineMessage(true, code)}
}

func isASCIIDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
