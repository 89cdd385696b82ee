package catalog

import (
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Domain errors of the catalog. Match them with errors.Is (type and code); the param is set
// where the error is raised.
var (
	ErrPriceInactive        = core.Invalid("price_inactive", "", "The default price must be an active price.")
	ErrPriceProductMismatch = core.Invalid("price_product_mismatch", "", "The price belongs to another product.")
	ErrProductInactive      = core.Invalid("product_inactive", "", "Prices cannot be added to an archived product.")
	ErrParameterImmutable   = core.Invalid("parameter_immutable", "", "This field cannot be changed once the price exists.")
	ErrLookupKeyTaken       = core.NewError(core.TypeResourceConflict, "lookup_key_taken", "lookup_key",
		"Another active price of this merchant already uses this lookup_key.")
)

// Store sentinels: what a Store returns for a missing row, an unknown list cursor or a lookup
// key another active price holds. They carry no type, code or param: the Service turns them
// into the documented errors (productNotFound, ListQuery.UnknownCursor, ErrLookupKeyTaken with
// the param of the request), so that an adapter never decides what the API answers.
var (
	ErrNotFound       = errors.New("catalog: not found")
	ErrUnknownCursor  = errors.New("catalog: the list cursor is not an object of the list")
	ErrLookupKeyInUse = errors.New("catalog: another active price of the scope uses this lookup key")
)
