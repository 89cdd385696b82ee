package billing

import (
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// E-mails of recurring billing, queued with the change that causes them and composed when
// sent (the composition root renders them with the e-mail adapter's templates).
const (
	// MailDunning tells the customer that an automatic charge of a subscription's invoice
	// failed, with the amount due and the hosted invoice link. Its subject is DunningSubject.
	MailDunning core.MailKind = "dunning"
	// MailTrialEnding tells the customer, with customer.subscription.trial_will_end, when the
	// trial ends and what will be charged then. Its subject is the subscription's id.
	MailTrialEnding core.MailKind = "trial_ending"
)

// DunningSubject is the subject of the dunning e-mail of invoiceID at stage (one per stage,
// so each failure has its own mail): "in_…/notice", "in_…/final/hard" after a hard decline.
func DunningSubject(invoiceID, stage string, hard bool) string {
	s := invoiceID + "/" + stage
	if hard {
		s += "/hard"
	}
	return s
}

// ParseDunningSubject reads a DunningSubject.
func ParseDunningSubject(subject string) (invoiceID, stage string, hard, ok bool) {
	parts := strings.Split(subject, "/")
	if len(parts) < 2 || len(parts) > 3 || (len(parts) == 3 && parts[2] != "hard") {
		return "", "", false, false
	}
	return parts[0], parts[1], len(parts) == 3, true
}

// NextAttemptAfter is when the attempt after a failure at stage is made, counted from the
// renewal at renewedAt; false when none follows (exhausted, or a hard decline).
func NextAttemptAfter(stage string, hard bool, renewedAt time.Time) (time.Time, bool) {
	if hard {
		return time.Time{}, false
	}
	for i, st := range []string{StageNotice, StageWarning, StageFinal} {
		if st == stage {
			return renewedAt.Add(RetrySchedule[i]), true
		}
	}
	return time.Time{}, false
}
