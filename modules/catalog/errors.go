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

// Store sentinels: what a Store returns for a missing row or an unknown list cursor. The
// Service turns them into the documented errors.
var (
	ErrNotFound = errors.New("catalog: not found")
)
