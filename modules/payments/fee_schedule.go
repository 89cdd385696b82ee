package payments

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"sort"
)

// FeeCategory is the line of a fee plan that applies to a payment: the method, and for cards
// the region of the issuing country (EEA or not).
type FeeCategory string

const (
	FeeCardEEA    FeeCategory = "card_eea"
	FeeCardNonEEA FeeCategory = "card_non_eea"
	FeeSEPADebit  FeeCategory = "sepa_debit"
)

// FeeRuleConfig is one line of a plan as written in the fee configuration file. Percentages
// are decimal strings ("1.8" = 1.8 %), parsed exactly (never through float64); fixed parts are
// EUR minor units (cents).
//
// The two halves of a line (D7, "PSP share reported separately"):
//   - Percent + FixedEURMinor is the service fee: the whole fee Kassa (the Service) charges the
//     merchant for the payment. It is what the merchant's balance is debited
//     (service_fee_eur, and service_fee_charge_currency in the charge currency).
//   - PSPPercent + PSPFixedEURMinor is the PSP fee: the part of that service fee which the
//     payment processor keeps (psp_fee_eur). It is included in the service fee, not added to
//     it; Kassa's own margin is service fee − PSP fee. It is reported for reconciliation and
//     never debited a second time.
type FeeRuleConfig struct {
	Percent          string `json:"percent"`
	FixedEURMinor    int64  `json:"fixed_eur_minor"`
	PSPPercent       string `json:"psp_percent"`
	PSPFixedEURMinor int64  `json:"psp_fixed_eur_minor"`
}

// FeePlanConfig is one named plan: a line per fee category, all three required.
type FeePlanConfig struct {
	CardEEA    FeeRuleConfig `json:"card_eea"`
	CardNonEEA FeeRuleConfig `json:"card_non_eea"`
	SEPADebit  FeeRuleConfig `json:"sepa_debit"`
}

// FeeScheduleConfig is the fee configuration file (D7), JSON:
//
//	{"description": "…", "default_plan": "standard",
//	 "plans": {"standard": {"card_eea": {"percent": "1.8", "fixed_eur_minor": 25,
//	                                      "psp_percent": "1.2", "psp_fixed_eur_minor": 10}, …}}}
//
// Unknown keys are refused so that a typo cannot silently drop a fee.
type FeeScheduleConfig struct {
	Description string                   `json:"description,omitempty"`
	DefaultPlan string                   `json:"default_plan"`
	Plans       map[string]FeePlanConfig `json:"plans"`
}

// DefaultFeeScheduleConfig is the built-in fee configuration. testdata/fees/default.json holds
// the same content (a test keeps them equal):
//
//	card, EEA issuer      1.8 % + €0.25, of which the PSP keeps 1.2 % + €0.10
//	card, non-EEA issuer  2.8 % + €0.25, of which the PSP keeps 2.2 % + €0.10
//	SEPA Direct Debit           €0.35, of which the PSP keeps       €0.20
func DefaultFeeScheduleConfig() FeeScheduleConfig {
	return FeeScheduleConfig{
		Description: "Kassa default fee plans. percent: decimal string, 1.8 = 1.8 %. " +
			"*_eur_minor: EUR cents. The psp_* part is included in the fee, not added to it.",
		DefaultPlan: "standard",
		Plans: map[string]FeePlanConfig{
			"standard": {
				CardEEA:    FeeRuleConfig{Percent: "1.8", FixedEURMinor: 25, PSPPercent: "1.2", PSPFixedEURMinor: 10},
				CardNonEEA: FeeRuleConfig{Percent: "2.8", FixedEURMinor: 25, PSPPercent: "2.2", PSPFixedEURMinor: 10},
				SEPADebit:  FeeRuleConfig{Percent: "0", FixedEURMinor: 35, PSPPercent: "0", PSPFixedEURMinor: 20},
			},
		},
	}
}

// FeeRule is a checked line of a plan.
type FeeRule struct {
	percent    *big.Rat // of 100
	fixed      int64    // EUR cents
	pspPercent *big.Rat
	pspFixed   int64
}

// Percent returns the service-fee percentage (a copy).
func (r FeeRule) Percent() *big.Rat { return new(big.Rat).Set(r.percent) }

// FixedEURMinor returns the fixed part of the service fee in EUR cents.
func (r FeeRule) FixedEURMinor() int64 { return r.fixed }

// PSPPercent returns the percentage the PSP keeps (a copy).
func (r FeeRule) PSPPercent() *big.Rat { return new(big.Rat).Set(r.pspPercent) }

// PSPFixedEURMinor returns the fixed part the PSP keeps, in EUR cents.
func (r FeeRule) PSPFixedEURMinor() int64 { return r.pspFixed }

// FeePlan is a checked plan.
type FeePlan struct {
	id    string
	rules map[FeeCategory]FeeRule
}

// ID is the plan's name in the configuration.
func (p FeePlan) ID() string { return p.id }

// Rule returns the plan's line for category.
func (p FeePlan) Rule(c FeeCategory) (FeeRule, bool) {
	r, ok := p.rules[c]
	return r, ok
}

// FeeSchedule is the checked fee configuration: named plans and the default one.
type FeeSchedule struct {
	defaultPlan string
	plans       map[string]FeePlan
}

// DefaultFeeSchedule returns the built-in schedule (DefaultFeeScheduleConfig).
func DefaultFeeSchedule() *FeeSchedule {
	s, err := NewFeeSchedule(DefaultFeeScheduleConfig())
	if err != nil {
		panic("payments: built-in fee schedule is invalid: " + err.Error()) // guarded by a test
	}
	return s
}

// ParseFeeSchedule reads and checks a fee configuration file (JSON, see FeeScheduleConfig).
func ParseFeeSchedule(r io.Reader) (*FeeSchedule, error) {
	cfg, err := DecodeFeeScheduleConfig(r)
	if err != nil {
		return nil, err
	}
	return NewFeeSchedule(cfg)
}

// DecodeFeeScheduleConfig decodes a fee configuration file without checking its figures.
func DecodeFeeScheduleConfig(r io.Reader) (FeeScheduleConfig, error) {
	var cfg FeeScheduleConfig
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return FeeScheduleConfig{}, fmt.Errorf("payments: fee configuration: %w", err)
	}
	if dec.More() {
		return FeeScheduleConfig{}, fmt.Errorf("payments: fee configuration: trailing data after the JSON object")
	}
	return cfg, nil
}

// NewFeeSchedule checks cfg: at least one plan, the default plan exists, every plan has its
// three lines, percentages are plain decimals from 0 to 100, fixed parts are not negative, and
// the PSP part of a line is not larger than the line itself (in percentage and fixed part, so
// psp_fee_eur ≤ service_fee_eur for every amount).
func NewFeeSchedule(cfg FeeScheduleConfig) (*FeeSchedule, error) {
	if len(cfg.Plans) == 0 {
		return nil, fmt.Errorf("payments: fee configuration: no plans")
	}
	if _, ok := cfg.Plans[cfg.DefaultPlan]; !ok {
		return nil, fmt.Errorf("payments: fee configuration: default_plan %q is not among the plans", cfg.DefaultPlan)
	}
	s := &FeeSchedule{defaultPlan: cfg.DefaultPlan, plans: map[string]FeePlan{}}
	for id, pc := range cfg.Plans {
		if id == "" {
			return nil, fmt.Errorf("payments: fee configuration: a plan has an empty name")
		}
		p := FeePlan{id: id, rules: map[FeeCategory]FeeRule{}}
		for c, rc := range map[FeeCategory]FeeRuleConfig{
			FeeCardEEA: pc.CardEEA, FeeCardNonEEA: pc.CardNonEEA, FeeSEPADebit: pc.SEPADebit,
		} {
			r, err := newFeeRule(rc)
			if err != nil {
				return nil, fmt.Errorf("payments: fee configuration: plan %q, %s: %w", id, c, err)
			}
			p.rules[c] = r
		}
		s.plans[id] = p
	}
	return s, nil
}

var percentRe = regexp.MustCompile(`^[0-9]{1,3}(\.[0-9]{1,6})?$`)

func parsePercent(field, s string) (*big.Rat, error) {
	v, ok := new(big.Rat).SetString(s)
	if !percentRe.MatchString(s) || !ok || v.Cmp(big.NewRat(100, 1)) > 0 {
		return nil, fmt.Errorf("%s %q: want a decimal string from 0 to 100 with at most 6 decimals", field, s)
	}
	return v, nil
}

func newFeeRule(c FeeRuleConfig) (FeeRule, error) {
	p, err := parsePercent("percent", c.Percent)
	if err != nil {
		return FeeRule{}, err
	}
	pp, err := parsePercent("psp_percent", c.PSPPercent)
	if err != nil {
		return FeeRule{}, err
	}
	switch {
	case c.FixedEURMinor < 0 || c.PSPFixedEURMinor < 0:
		return FeeRule{}, fmt.Errorf("fixed parts must not be negative")
	case c.FixedEURMinor > 100_000 || c.PSPFixedEURMinor > 100_000:
		return FeeRule{}, fmt.Errorf("fixed parts above €1000 are certainly a mistake")
	case pp.Cmp(p) > 0 || c.PSPFixedEURMinor > c.FixedEURMinor:
		return FeeRule{}, fmt.Errorf("the PSP part must not exceed the fee it is part of")
	}
	return FeeRule{percent: p, fixed: c.FixedEURMinor, pspPercent: pp, pspFixed: c.PSPFixedEURMinor}, nil
}

// DefaultPlanID names the plan used when a merchant has none.
func (s *FeeSchedule) DefaultPlanID() string { return s.defaultPlan }

// PlanIDs lists the plan names, sorted.
func (s *FeeSchedule) PlanIDs() []string {
	ids := make([]string, 0, len(s.plans))
	for id := range s.plans {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Plan returns the named plan; "" is the default plan.
func (s *FeeSchedule) Plan(id string) (FeePlan, bool) {
	if id == "" {
		id = s.defaultPlan
	}
	p, ok := s.plans[id]
	return p, ok
}
