package core

// Environment is the sandbox (test) or live side of a merchant. The API key used for a
// request decides which one it touches.
type Environment string

const (
	EnvTest Environment = "test"
	EnvLive Environment = "live"
)

// Valid reports whether e is one of the two environments.
func (e Environment) Valid() bool { return e == EnvTest || e == EnvLive }

// Scope is the tenant boundary: every stored object belongs to exactly one merchant and one
// environment, and every query filters by both.
type Scope struct {
	MerchantID string
	Env        Environment
}
