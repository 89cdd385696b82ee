package present

import (
	"github.com/kassa-pay/kassa/modules/testclock"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// TestClock renders a merchant's test clock as the merchant API and the dashboard answer it:
// frozen_time null while it follows real time, status advancing with its target while an
// advance runs its due work.
func TestClock(c testclock.Clock) wire.TestClock {
	out := wire.TestClock{Object: wire.TestClockObjectTestClock, Now: c.Now.Unix(), Status: wire.TestClockStatusReady}
	if c.FrozenTime != nil {
		t := c.FrozenTime.Unix()
		out.FrozenTime = &t
	}
	if c.Status == testclock.StatusAdvancing && c.AdvancingTo != nil {
		t := c.AdvancingTo.Unix()
		out.Status, out.AdvancingTo = wire.TestClockStatusAdvancing, &t
	}
	return out
}
