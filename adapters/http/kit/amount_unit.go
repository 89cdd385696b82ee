package kit

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/kassa-pay/kassa/core"
)

// withAmountUnit gives a below-minimum error of the validator the modules' message, which
// names the minimum in the currency of the object that holds the amount (its sibling
// "currency": "at least 250 minor units, 2.50 EUR"). The schema knows only the number, the
// body knows the currency. Any other error, or a body without a supported currency next to
// the amount, is returned as it is (then with the modules' message without the currency).
func withAmountUnit(e *core.Error, body []byte) *core.Error {
	if e == nil || e.Code != core.ErrAmountTooSmall.Code {
		return e
	}
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return e
	}
	path := strings.Split(e.Param, ".")
	for _, key := range path[:len(path)-1] {
		switch v := doc.(type) {
		case map[string]any:
			doc = v[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(v) {
				return e
			}
			doc = v[i]
		default:
			return e
		}
	}
	obj, _ := doc.(map[string]any)
	code, _ := obj["currency"].(string)
	cur, err := core.ParseCurrency(code, "currency")
	if err != nil {
		cur = ""
	}
	var unit *core.Error
	if errors.As(core.CheckAmountIn(0, cur, e.Param), &unit) {
		return e.Msg("%s", unit.Message)
	}
	return e
}
