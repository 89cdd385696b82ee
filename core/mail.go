package core

import "time"

// MailKind names a kind of e-mail the platform sends ("receipt"). Each kind has one composer,
// registered by the module that owns its subject, which writes the message when it is sent.
type MailKind string

// Mail is one e-mail queued about a subject (a payment, for a receipt). It is queued in the
// same transaction as the change that causes it and composed only when it is sent, from the
// subject as it is then; at most one mail of a kind is queued per subject.
type Mail struct {
	Kind      MailKind
	Scope     Scope
	SubjectID string
	// Created is the scope's time when the cause happened (a receipt's date).
	Created time.Time
}
