package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// setupKeyPrefix keeps the journal's setups apart from its charges: a setup and a charge may
// be made with the same idempotency key.
const setupKeyPrefix = "setup:"

var _ ports.MethodSaver = (*Processor)(nil)

// SetupPaymentMethod implements ports.MethodSaver: the method is checked like a charge of 0
// (the same test numbers and IBANs, D6) and saved. 4000000000000341 saves and then declines
// every charge; 4000002760003184 asks for 3-D Secure (CompleteAction with the ProcessorRef);
// a SEPA account gives its mandate at once. The customer reference is derived from the scope
// and the Kassa customer, so the sandbox keeps no customers.
func (p *Processor) SetupPaymentMethod(ctx context.Context, req ports.SetupRequest, now time.Time) (ports.SetupResult, error) {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return ports.SetupResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return ports.SetupResult{}, err
	}
	if req.Customer.ID == "" {
		return ports.SetupResult{}, fmt.Errorf("%w: a setup needs the customer", ports.ErrChargeRequestInvalid)
	}
	creq := ports.ChargeRequest{Scope: req.Scope, Reference: req.Reference, Amount: 0, Currency: "EUR",
		Method: req.Method, Card: req.Card, SEPA: req.SEPA, SavePaymentMethod: true}
	if req.IdempotencyKey != "" {
		creq.IdempotencyKey = setupKeyPrefix + req.IdempotencyKey
	}
	if err := checkRequest(creq); err != nil {
		return ports.SetupResult{}, err
	}
	if creq.Card == nil && creq.SEPA == nil {
		return ports.SetupResult{}, fmt.Errorf("%w: a setup takes a card or a bank account", ports.ErrChargeRequestInvalid)
	}
	now = now.UTC().Truncate(time.Second)
	var res ports.ChargeResult
	if creq.Method == ports.MethodCard {
		res = chargeCard(creq, now)
	} else {
		res = chargeSEPA(creq, now)
	}
	if creq.IdempotencyKey != "" && p.journal != nil {
		var err error
		if res, err = p.journal.Remember(ctx, req.Scope, creq.IdempotencyKey, res); err != nil {
			return ports.SetupResult{}, err
		}
	}
	return setupResult(res, customerRef(req.Scope, req.Customer)), nil
}

// LookupSetup implements ports.MethodSaver from the journal.
func (p *Processor) LookupSetup(ctx context.Context, scope core.Scope, idempotencyKey string, now time.Time) (ports.SetupResult, error) {
	res, err := p.Lookup(ctx, scope, setupKeyPrefix+idempotencyKey, now)
	if errors.Is(err, ports.ErrChargeUnknown) || (err == nil && idempotencyKey == "") {
		return ports.SetupResult{}, ports.ErrSetupUnknown
	}
	if err != nil {
		return ports.SetupResult{}, err
	}
	return setupResult(res, ""), nil
}

// DetachPaymentMethod implements ports.MethodSaver. The sandbox keeps no saved methods, so
// it only checks that the reference is one of its saved methods; Kassa itself stops charging
// a method it detached.
func (p *Processor) DetachPaymentMethod(ctx context.Context, _ core.Scope, paymentMethodRef string, _ time.Time) error {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return err
	}
	r, err := parseRef(paymentMethodRef)
	if err != nil {
		return err
	}
	if r.kind != refMethod {
		return fmt.Errorf("%w: not a saved payment method", ports.ErrProcessorRefUnknown)
	}
	return nil
}

func setupResult(res ports.ChargeResult, customer string) ports.SetupResult {
	return ports.SetupResult{Outcome: res.Outcome, ProcessorRef: res.ProcessorRef, CustomerRef: customer,
		PaymentMethodRef: res.PaymentMethodRef, Card: res.Card, SEPA: res.SEPA, DeclineCode: res.DeclineCode,
		FailureMessage: res.FailureMessage, Action: res.Action}
}

// customerRef is the sandbox's customer of a Kassa customer: the one it was given, or one
// derived from the scope and the customer's id.
func customerRef(scope core.Scope, c ports.SetupCustomer) string {
	if c.ProcessorRef != "" {
		return c.ProcessorRef
	}
	sum := sha256.Sum256([]byte(scope.MerchantID + "\x00" + string(scope.Env) + "\x00" + c.ID))
	return "sbxcus_" + hex.EncodeToString(sum[:12])
}
