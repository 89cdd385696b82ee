package catalog

import (
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Price types, tax behaviours, intervals and usage types (interface 2.5, D13).
const (
	TypeOneTime   = "one_time"
	TypeRecurring = "recurring"

	TaxInclusive   = "inclusive"
	TaxExclusive   = "exclusive"
	TaxUnspecified = "unspecified"

	IntervalDay   = "day"
	IntervalWeek  = "week"
	IntervalMonth = "month"
	IntervalYear  = "year"

	UsageLicensed = "licensed"
	UsageMetered  = "metered"
)

// maxIntervalCount keeps a billing period at most one year long (D13).
var maxIntervalCount = map[string]int{IntervalDay: 365, IntervalWeek: 52, IntervalMonth: 12, IntervalYear: 1}

// Recurring is the billing cycle of a recurring price. In input IntervalCount 0 means 1 and
// UsageType "" means licensed; a stored Recurring has both filled in.
type Recurring struct {
	Interval        string
	IntervalCount   int
	TrialPeriodDays *int
	UsageType       string
}

// PriceInput is what a merchant sends to create a price (interface 2.5, 4.3).
type PriceInput struct {
	Currency    string
	UnitAmount  int64
	Nickname    *string
	LookupKey   *string
	TaxBehavior string // "" = unspecified
	Recurring   *Recurring
	Metadata    map[string]string
}

// PriceSnapshot is the stored form of a price. Optional strings are "" when unset.
type PriceSnapshot struct {
	ID          string
	Scope       core.Scope
	ProductID   string
	Currency    core.Currency // uppercase
	UnitAmount  int64
	Nickname    string
	LookupKey   string
	TaxBehavior string
	Recurring   *Recurring // nil for one-time prices
	Metadata    map[string]string
	Active      bool
	Created     time.Time
	Updated     time.Time
}

// Price is a price (price_) of a product. Amount, currency and recurrence never change.
type Price struct {
	r PriceSnapshot
	// changed is set by every transition that changes the stored fields, so that the store
	// writes back exactly the prices that changed (Product.Changes).
	changed bool
}

// NewPrice checks in and builds a new active price of productID. prefix is the param path of
// the price object in the request ("" for POST /prices, "price" for the inline price).
func NewPrice(scope core.Scope, productID string, in PriceInput, prefix string, now time.Time) (*Price, error) {
	if in.Currency == "" {
		return nil, core.MissingField(join(prefix, "currency"))
	}
	cur, err := core.ParseCurrency(in.Currency, join(prefix, "currency"))
	if err != nil {
		return nil, err
	}
	if err := core.CheckAmountIn(in.UnitAmount, cur, join(prefix, "unit_amount")); err != nil {
		return nil, err
	}
	r := PriceSnapshot{
		ID:          core.NewID(core.PrefixPrice),
		Scope:       scope,
		ProductID:   productID,
		Currency:    cur,
		UnitAmount:  in.UnitAmount,
		Nickname:    deref(in.Nickname),
		LookupKey:   deref(in.LookupKey),
		TaxBehavior: TaxUnspecified,
		Active:      true,
		Created:     now,
		Updated:     now,
	}
	if err := checkNickname(r.Nickname, prefix); err != nil {
		return nil, err
	}
	if err := checkLookupKey(r.LookupKey, prefix); err != nil {
		return nil, err
	}
	if in.TaxBehavior != "" {
		if err := checkTaxBehavior(in.TaxBehavior, prefix); err != nil {
			return nil, err
		}
		r.TaxBehavior = in.TaxBehavior
	}
	if in.Recurring != nil {
		rec, err := checkRecurring(*in.Recurring, join(prefix, "recurring"))
		if err != nil {
			return nil, err
		}
		r.Recurring = &rec
	}
	if r.Metadata, err = mergeMetadata(nil, in.Metadata, prefix); err != nil {
		return nil, err
	}
	return &Price{r: r}, nil
}

func checkNickname(v, prefix string) error {
	if runes(v) > MaxNicknameLen {
		return core.InvalidField(join(prefix, "nickname"), "nickname must be at most %d characters.", MaxNicknameLen)
	}
	return nil
}

func checkLookupKey(v, prefix string) error {
	if runes(v) > MaxLookupKeyLen {
		return core.InvalidField(join(prefix, "lookup_key"), "lookup_key must be at most %d characters.", MaxLookupKeyLen)
	}
	return nil
}

func checkTaxBehavior(v, prefix string) error {
	switch v {
	case TaxInclusive, TaxExclusive, TaxUnspecified:
		return nil
	}
	return core.InvalidField(join(prefix, "tax_behavior"), "tax_behavior must be inclusive, exclusive or unspecified.")
}

func checkRecurring(in Recurring, param string) (Recurring, error) {
	max, ok := maxIntervalCount[in.Interval]
	if in.Interval == "" {
		return in, core.MissingField(param + ".interval")
	}
	if !ok {
		return in, core.InvalidField(param+".interval", "interval must be day, week, month or year.")
	}
	if in.IntervalCount == 0 {
		in.IntervalCount = 1
	}
	if in.IntervalCount < 1 || in.IntervalCount > max {
		return in, core.InvalidField(param+".interval_count", "interval_count must be between 1 and %d for interval %s (at most one year).", max, in.Interval)
	}
	if in.TrialPeriodDays != nil {
		d := *in.TrialPeriodDays
		if d < 0 || d > MaxTrialPeriodDays {
			return in, core.InvalidField(param+".trial_period_days", "trial_period_days must be between 0 and %d.", MaxTrialPeriodDays)
		}
		in.TrialPeriodDays = &d
	}
	switch in.UsageType {
	case "":
		in.UsageType = UsageLicensed
	case UsageLicensed, UsageMetered:
	default:
		return in, core.InvalidField(param+".usage_type", "usage_type must be licensed or metered.")
	}
	return in, nil
}

// RehydratePrice rebuilds a price from storage without validating it.
func RehydratePrice(r PriceSnapshot) *Price { return &Price{r: r} }

// Snapshot returns a copy of the price's full state for storage.
func (p *Price) Snapshot() PriceSnapshot {
	r := p.r
	r.Metadata = cloneMap(p.r.Metadata)
	r.Recurring = p.Recurring()
	return r
}

func (p *Price) ID() string                  { return p.r.ID }
func (p *Price) Scope() core.Scope           { return p.r.Scope }
func (p *Price) ProductID() string           { return p.r.ProductID }
func (p *Price) Currency() core.Currency     { return p.r.Currency }
func (p *Price) UnitAmount() int64           { return p.r.UnitAmount }
func (p *Price) Nickname() string            { return p.r.Nickname }
func (p *Price) LookupKey() string           { return p.r.LookupKey }
func (p *Price) TaxBehavior() string         { return p.r.TaxBehavior }
func (p *Price) Metadata() map[string]string { return cloneMap(p.r.Metadata) }
func (p *Price) Active() bool                { return p.r.Active }
func (p *Price) Created() time.Time          { return p.r.Created }
func (p *Price) Updated() time.Time          { return p.r.Updated }

// Type is recurring exactly when the price has a Recurring, one_time otherwise.
func (p *Price) Type() string {
	if p.r.Recurring != nil {
		return TypeRecurring
	}
	return TypeOneTime
}

// Recurring returns a copy of the billing cycle, nil for a one-time price.
func (p *Price) Recurring() *Recurring {
	if p.r.Recurring == nil {
		return nil
	}
	rc := *p.r.Recurring
	if rc.TrialPeriodDays != nil {
		d := *rc.TrialPeriodDays
		rc.TrialPeriodDays = &d
	}
	return &rc
}

// Apply changes the mutable fields (active, nickname, tax_behavior, lookup_key, metadata).
// Any immutable field named in patch.Immutable gives parameter_immutable; nothing changes on
// error. Whether a re-activated price's lookup_key is still free is the store's to enforce.
func (p *Price) Apply(patch PricePatch, now time.Time) error {
	if err := patch.checkImmutable(); err != nil {
		return err
	}
	r := p.Snapshot()
	if patch.Nickname != nil {
		if err := checkNickname(*patch.Nickname, ""); err != nil {
			return err
		}
		r.Nickname = *patch.Nickname
	}
	if patch.LookupKey != nil {
		if err := checkLookupKey(*patch.LookupKey, ""); err != nil {
			return err
		}
		r.LookupKey = *patch.LookupKey
	}
	if patch.TaxBehavior != nil {
		v := *patch.TaxBehavior
		if v == "" {
			v = TaxUnspecified
		}
		if err := checkTaxBehavior(v, ""); err != nil {
			return err
		}
		r.TaxBehavior = v
	}
	if patch.Metadata != nil {
		md, err := mergeMetadata(r.Metadata, patch.Metadata, "")
		if err != nil {
			return err
		}
		r.Metadata = md
	}
	if patch.Active != nil {
		r.Active = *patch.Active
	}
	r.Updated = now
	p.r = r
	p.changed = true
	return nil
}

func (p *Price) deactivate(now time.Time) {
	if p.r.Active {
		p.r.Active = false
		p.r.Updated = now
		p.changed = true
	}
}

// checkImmutable refuses a patch that carries an immutable field.
func (patch PricePatch) checkImmutable() error {
	if len(patch.Immutable) > 0 {
		f := patch.Immutable[0]
		return ErrParameterImmutable.At(f).Msg("%s cannot be changed once the price exists; create a new price instead.", f)
	}
	return nil
}
