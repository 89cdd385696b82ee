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

// DunningAuthSubject is the subject of the dunning e-mail of invoiceID at stage after a
// charge the customer's bank wants them to authenticate (authentication_required):
// "in_…/notice/auth". The e-mail asks them to confirm the payment on the hosted page.
func DunningAuthSubject(invoiceID, stage string) string { return invoiceID + "/" + stage + "/auth" }

// ParseDunningSubject reads a DunningSubject or a DunningAuthSubject.
func ParseDunningSubject(subject string) (invoiceID, stage string, hard, ok bool) {
	invoiceID, stage, hard, _, ok = ParseDunningMail(subject)
	return invoiceID, stage, hard, ok
}

// ParseDunningMail reads a DunningSubject or a DunningAuthSubject: auth is set for the latter.
func ParseDunningMail(subject string) (invoiceID, stage string, hard, auth, ok bool) {
	parts := strings.Split(subject, "/")
	if len(parts) < 2 || len(parts) > 3 || (len(parts) == 3 && parts[2] != "hard" && parts[2] != "auth") {
		return "", "", false, false, false
	}
	tail := ""
	if len(parts) == 3 {
		tail = parts[2]
	}
	return parts[0], parts[1], tail == "hard", tail == "auth", true
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
