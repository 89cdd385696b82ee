package testclock

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// targetPoint is the recovery point of a keyed advance whose target is fixed: "target
// <Unix seconds>".
const targetPoint = "target "

// advanceInPhases is Advance for a request with an Idempotency-Key (the operation is of the
// gate's phased shape: it runs outside any transaction, and a retry after a crash resumes it).
//
//  1. The target is computed from the clock as the first request found it, and recorded as
//     the key's recovery point (committed on its own). A retry with the same key never
//     computes it again: an advance by `seconds` moves the clock once, however often it is
//     retried.
//  2. The clock is advanced to the target, running the due work up to it. A retry finds the
//     clock already at (or past) the target when an earlier try finished it, and answers the
//     clock without running anything; otherwise it runs the advance to the target again, and
//     the due work it meets is only what the cut try left undone (due work is state-based).
func (s *Service) advanceInPhases(ctx context.Context, scope core.Scope, seconds, to *int64, p ports.KeyPhases) (Clock, error) {
	target, resumed, err := parseTargetPoint(p.Point())
	if err != nil {
		return Clock{}, err
	}
	if !resumed {
		c, err := s.Get(ctx, scope)
		if err != nil {
			return Clock{}, err
		}
		if target, err = targetOf(c.Now, seconds, to); err != nil {
			return Clock{}, err
		}
		if err := p.Reach(ctx, targetPoint+strconv.FormatInt(target.Unix(), 10)); err != nil {
			return Clock{}, err
		}
	}
	c, err := s.Get(ctx, scope)
	if err != nil {
		return Clock{}, err
	}
	if c.FrozenTime != nil && !c.FrozenTime.Before(target) {
		return c, nil // an earlier try of this key finished the advance
	}
	unix := target.Unix()
	return s.Advance(ports.WithKeyPhases(ctx, nil), scope, nil, &unix)
}

// parseTargetPoint reads a keyed advance's recovery point: resumed is false for "" (the
// target is not fixed yet).
func parseTargetPoint(point string) (target time.Time, resumed bool, err error) {
	if point == "" {
		return time.Time{}, false, nil
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(point, targetPoint), 10, 64)
	if !strings.HasPrefix(point, targetPoint) || err != nil {
		return time.Time{}, false, fmt.Errorf("testclock: unknown recovery point %q", point)
	}
	return time.Unix(n, 0).UTC(), true, nil
}
