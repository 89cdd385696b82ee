package payments

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Fee is the fee locked on a payment when it is created (interface 2.2 `fee`, D7).
type Fee struct {
	// ServiceFeeEUR is the whole fee the merchant pays Kassa, in EUR cents
	// (service_fee_eur). It includes PSPFeeEUR.
	ServiceFeeEUR int64
	// PSPFeeEUR is the part of ServiceFeeEUR that the payment processor keeps, in EUR cents
	// (psp_fee_eur). Reported for reconciliation; never debited on top of the service fee.
	PSPFeeEUR int64
	// ServiceFeeChargeCurrency is ServiceFeeEUR in the charge currency's minor units
	// (service_fee_charge_currency): what the merchant's balance is debited.
	ServiceFeeChargeCurrency int64
	// Currency is the charge currency (`currency` of the fee object).
	Currency core.Currency
	// RateDate is the publication day of the ECB rate used (00:00 UTC). For EUR charges it is
	// the charge day itself: no rate is needed.
	RateDate time.Time
	// Rate is the exact rate the fee used, as a decimal string: 1 EUR = Rate units of
	// Currency ("1" for EUR charges). It is stored with the fee (D7: the ledger and the fee
	// breakdown never look the rate up again). Empty only for fees stored before it was kept.
	Rate string
}

// eeaCountries are the issuing countries of EEA cards: the 27 EU members and Iceland,
// Liechtenstein and Norway (ISO 3166-1 alpha-2; Greece is GR).
var eeaCountries = map[string]bool{
	"AT": true, "BE": true, "BG": true, "HR": true, "CY": true, "CZ": true, "DK": true,
	"EE": true, "FI": true, "FR": true, "DE": true, "GR": true, "HU": true, "IE": true,
	"IT": true, "LV": true, "LT": true, "LU": true, "MT": true, "NL": true, "PL": true,
	"PT": true, "RO": true, "SK": true, "SI": true, "ES": true, "SE": true,
	"IS": true, "LI": true, "NO": true,
}

// IsEEA reports whether the ISO alpha-2 country code (any case) is in the EEA.
func IsEEA(country string) bool { return eeaCountries[strings.ToUpper(country)] }

// FeeCategoryOf picks the plan line of a payment: sepa_debit, or for cards card_eea /
// card_non_eea by the card's issuing country. A card needs a two-letter country code.
func FeeCategoryOf(method PaymentMethod, cardCountry string) (FeeCategory, error) {
	switch method {
	case MethodSEPADebit:
		return FeeSEPADebit, nil
	case MethodCard:
		if !isCountryCode(cardCountry) {
			return "", fmt.Errorf("payments: card country %q is not an ISO 3166-1 alpha-2 code", cardCountry)
		}
		if IsEEA(cardCountry) {
			return FeeCardEEA, nil
		}
		return FeeCardNonEEA, nil
	}
	return "", fmt.Errorf("payments: unknown payment method %q", method)
}

func isCountryCode(s string) bool {
	if len(s) != 2 {
		return false
	}
	for i := 0; i < 2; i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// ComputeFee applies one plan line to a charge of `amount` minor units of `currency`.
// `rate` is the ECB rate EUR→currency of the charge day (1 EUR = r units of currency); for
// a EUR charge it must be 1. All arithmetic is exact (math/big); rounding is half-up (a tie
// goes away from zero, so 4.5 → 5, never to the even neighbour) and happens exactly at these
// steps, each result an integer number of minor units:
//
//  1. Charge in EUR: A_eur = round( A × 100 / (10^e × r) ) EUR cents, where A is the amount in
//     minor units and e the currency's exponent (0 for JPY, KRW, ISK). For EUR, A_eur = A.
//  2. Service fee: service_fee_eur = round( A_eur × percent / 100 ) + fixed_eur_minor.
//     PSP fee:     psp_fee_eur     = round( A_eur × psp_percent / 100 ) + psp_fixed_eur_minor.
//     (Only the percentage part can be fractional; the fixed parts are whole cents.)
//  3. Back to the charge currency at the same rate:
//     service_fee_charge_currency = round( service_fee_eur × r × 10^e / 100 ).
//     For EUR it equals service_fee_eur.
//  4. Cap (D7, as amended): a fee never exceeds the amount it is charged on. When
//     service_fee_charge_currency > A, it becomes A and both EUR parts are reduced in the same
//     proportion: service_fee_eur = round( service_fee_eur × A / uncapped ), psp_fee_eur
//     likewise (uncapped being step 3's result), so the net is never negative.
//
// Example: USD 100.00 (10000) with a non-EEA card at 1 EUR = 1.1625 USD: A_eur =
// round(8602.15…) = 8602; service = round(240.856) + 25 = 266; psp = round(189.244) + 10 =
// 199; in USD round(309.225) = 309.
func ComputeFee(rule FeeRule, amount int64, currency core.Currency, rate ports.Rate) (Fee, error) {
	if _, err := core.ParseCurrency(string(currency), "currency"); err != nil {
		return Fee{}, err
	}
	if amount <= 0 {
		return Fee{}, fmt.Errorf("payments: fee of a non-positive amount %d", amount)
	}
	if rule.percent == nil || rule.pspPercent == nil {
		return Fee{}, fmt.Errorf("payments: fee rule not configured")
	}
	if rate.IsZero() || rate.From != "EUR" || rate.To != currency {
		return Fee{}, fmt.Errorf("payments: need the rate EUR→%s, got %s", currency, rate)
	}
	r := rate.Value()
	if currency == "EUR" && r.Cmp(big.NewRat(1, 1)) != 0 {
		return Fee{}, fmt.Errorf("payments: EUR→EUR rate must be 1, got %s", rate)
	}
	// minorPerEURCent = r × 10^e / 100: charge-currency minor units per EUR cent.
	minorPerEURCent := new(big.Rat).Mul(r, pow10Rat(currency.Exponent()-2))

	// Step 1.
	amountEUR, err := roundHalfUp(new(big.Rat).Quo(big.NewRat(amount, 1), minorPerEURCent))
	if err != nil {
		return Fee{}, err
	}
	// Step 2.
	service, err := percentOf(amountEUR, rule.percent)
	if err != nil {
		return Fee{}, err
	}
	service += rule.fixed
	psp, err := percentOf(amountEUR, rule.pspPercent)
	if err != nil {
		return Fee{}, err
	}
	psp += rule.pspFixed
	// Step 3.
	inCharge, err := roundHalfUp(new(big.Rat).Mul(big.NewRat(service, 1), minorPerEURCent))
	if err != nil {
		return Fee{}, err
	}
	// Step 4.
	if inCharge > amount {
		if service, err = scaled(service, amount, inCharge); err != nil {
			return Fee{}, err
		}
		if psp, err = scaled(psp, amount, inCharge); err != nil {
			return Fee{}, err
		}
		inCharge = amount
	}
	exact, err := ExactDecimal(r)
	if err != nil {
		return Fee{}, fmt.Errorf("payments: rate %s: %w", rate, err)
	}
	return Fee{
		ServiceFeeEUR:            service,
		PSPFeeEUR:                psp,
		ServiceFeeChargeCurrency: inCharge,
		Currency:                 currency,
		RateDate:                 rate.Day,
		Rate:                     exact,
	}, nil
}

// scaled returns round(v × num / den), half-up.
func scaled(v, num, den int64) (int64, error) {
	return roundHalfUp(new(big.Rat).SetFrac(
		new(big.Int).Mul(big.NewInt(v), big.NewInt(num)), big.NewInt(den)))
}

// ExactDecimal renders r as a decimal string without losing anything ("1.1625", "1",
// "0.000123"). A rate that has no finite decimal form (its denominator has a prime factor other
// than 2 and 5, as a cross rate may) is refused: a rate read from a decimal source always has
// one.
func ExactDecimal(r *big.Rat) (string, error) {
	den := new(big.Int).Set(r.Denom())
	digits := 0
	two, five, zero := big.NewInt(2), big.NewInt(5), new(big.Int)
	var twos, fives int
	for m := new(big.Int); ; twos++ {
		if m.Mod(den, two).Cmp(zero) != 0 {
			break
		}
		den.Quo(den, two)
	}
	for m := new(big.Int); ; fives++ {
		if m.Mod(den, five).Cmp(zero) != 0 {
			break
		}
		den.Quo(den, five)
	}
	if den.Cmp(big.NewInt(1)) != 0 {
		return "", fmt.Errorf("%s has no finite decimal form", r.RatString())
	}
	digits = max(twos, fives)
	return r.FloatString(digits), nil
}

// percentOf returns round(x × pct / 100).
func percentOf(x int64, pct *big.Rat) (int64, error) {
	v := new(big.Rat).Mul(big.NewRat(x, 1), pct)
	return roundHalfUp(v.Quo(v, big.NewRat(100, 1)))
}

// pow10Rat returns 10^n for any integer n.
func pow10Rat(n int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(n))), nil)
	if n < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), p)
	}
	return new(big.Rat).SetInt(p)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// roundHalfUp rounds x to the nearest integer, a tie away from zero (commercial rounding:
// 2.5 → 3, −2.5 → −3). It fails when the result does not fit an int64.
func roundHalfUp(x *big.Rat) (int64, error) {
	num := new(big.Int).Abs(x.Num())
	den := x.Denom() // > 0
	// floor((2·|num| + den) / (2·den)) = floor(|x| + 1/2)
	q := new(big.Int).Lsh(num, 1)
	q.Add(q, den)
	q.Quo(q, new(big.Int).Lsh(den, 1))
	if x.Sign() < 0 {
		q.Neg(q)
	}
	if !q.IsInt64() {
		return 0, fmt.Errorf("payments: %s does not fit in int64", x.FloatString(2))
	}
	return q.Int64(), nil
}

// FeeInput is what the fee of a charge depends on.
type FeeInput struct {
	// Plan names the merchant's fee plan; "" is the schedule's default plan.
	Plan     string
	Amount   int64
	Currency core.Currency
	Method   PaymentMethod
	// CardCountry is the card's issuing country (ISO alpha-2); required for cards.
	CardCountry string
	// ChargedAt is the charge instant; the ECB rate of its UTC date (or the latest before it)
	// is used.
	ChargedAt time.Time
}

// FeeCalculator computes fees from a schedule and an FX-rate source.
type FeeCalculator struct {
	schedule *FeeSchedule
	rates    ports.FXRates
}

// NewFeeCalculator returns a calculator over schedule and rates.
func NewFeeCalculator(schedule *FeeSchedule, rates ports.FXRates) *FeeCalculator {
	return &FeeCalculator{schedule: schedule, rates: rates}
}

// Compute returns the fee of a charge (see ComputeFee for the exact steps). A EUR charge needs
// no rate and its RateDate is the UTC date of ChargedAt; any other currency takes the rate
// EUR→currency of the charge day from the FX port, and its RateDate is that rate's
// publication day.
func (c *FeeCalculator) Compute(ctx context.Context, in FeeInput) (Fee, error) {
	plan, ok := c.schedule.Plan(in.Plan)
	if !ok {
		return Fee{}, fmt.Errorf("payments: unknown fee plan %q", in.Plan)
	}
	cat, err := FeeCategoryOf(in.Method, in.CardCountry)
	if err != nil {
		return Fee{}, err
	}
	rule, _ := plan.Rule(cat)
	var rate ports.Rate
	if in.Currency == "EUR" {
		rate, err = ports.NewRate("EUR", "EUR", in.ChargedAt, big.NewRat(1, 1))
	} else {
		rate, err = c.rates.Rate(ctx, in.ChargedAt, "EUR", in.Currency)
	}
	if err != nil {
		return Fee{}, fmt.Errorf("payments: fee of a %s charge: %w", in.Currency, err)
	}
	return ComputeFee(rule, in.Amount, in.Currency, rate)
}

// Share returns the part of f that corresponds to `part` of `whole` minor units, for a refund
// of `part` out of a charge of `whole` ("pro-rata fee reversed", interface 3.2). Each field is
// round(field × part / whole), half-up; part = whole gives f itself.
func (f Fee) Share(part, whole int64) (Fee, error) {
	if whole <= 0 || part < 0 || part > whole {
		return Fee{}, fmt.Errorf("payments: fee share %d of %d", part, whole)
	}
	share := func(v int64) (int64, error) {
		return roundHalfUp(new(big.Rat).SetFrac(
			new(big.Int).Mul(big.NewInt(v), big.NewInt(part)), big.NewInt(whole)))
	}
	out := f
	var err error
	if out.ServiceFeeEUR, err = share(f.ServiceFeeEUR); err != nil {
		return Fee{}, err
	}
	if out.PSPFeeEUR, err = share(f.PSPFeeEUR); err != nil {
		return Fee{}, err
	}
	if out.ServiceFeeChargeCurrency, err = share(f.ServiceFeeChargeCurrency); err != nil {
		return Fee{}, err
	}
	return out, nil
}

// minus returns f − g field by field, as money: the EUR parts in EUR, the charged part in the
// fee's currency (a refund's fee reversal is the share after it less the share before it).
// Fees of two charge currencies are not subtracted.
func (f Fee) minus(g Fee) (Fee, error) {
	out := f
	for _, d := range []struct {
		dst        *int64
		a, b       int64
		cur1, cur2 core.Currency
	}{
		{&out.ServiceFeeEUR, f.ServiceFeeEUR, g.ServiceFeeEUR, "EUR", "EUR"},
		{&out.PSPFeeEUR, f.PSPFeeEUR, g.PSPFeeEUR, "EUR", "EUR"},
		{&out.ServiceFeeChargeCurrency, f.ServiceFeeChargeCurrency, g.ServiceFeeChargeCurrency, f.Currency, g.Currency},
	} {
		m, err := core.NewMoney(d.a, d.cur1).Sub(core.NewMoney(d.b, d.cur2))
		if err != nil {
			return Fee{}, fmt.Errorf("payments: fee difference: %w", err)
		}
		*d.dst = m.Amount()
	}
	return out, nil
}
