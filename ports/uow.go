package ports

import "context"

// UnitOfWork runs a function in one database transaction: everything it writes through the
// stores is committed together when it returns nil, and nothing is when it returns an error
// or panics.
//
// The transaction travels in the context that Do hands to fn. A module therefore needs no
// special transactional repository: the store ports it already has are its repositories
// inside the unit of work, as long as it calls them with that context. The Postgres adapter
// runs every statement of such a call on the transaction (and never on a second pooled
// connection); the transaction itself stays invisible outside the adapter.
//
// Rules of use:
//   - fn may run more than once: Do retries it from the start when the database reports a
//     serialization failure or a deadlock (SQLSTATE 40001, 40P01), a few times with a short
//     random pause. fn must therefore not have effects outside the database (no processor
//     call, no e-mail, no HTTP) — record them in the transaction (an outbox row, a charge
//     attempt) and perform them after Do returned.
//   - A Do inside another Do (same context) joins the outer transaction: it commits nothing
//     of its own, and when its fn fails only its own writes are undone (a savepoint).
//   - Statements are bounded by a server-side statement timeout, and so is any pause between
//     two statements: a unit of work is short database work, never a wait.
//
// Example — a use case that writes two aggregates and an event atomically:
//
//	err := s.uow.Do(ctx, func(ctx context.Context) error {
//		sess, err := s.sessions.Get(ctx, scope, id)
//		if err != nil {
//			return err
//		}
//		if err := s.payments.Create(ctx, payment); err != nil {
//			return err
//		}
//		return s.sessions.Update(ctx, sess, markPaid) // its events commit with it
//	})
type UnitOfWork interface {
	Do(ctx context.Context, fn func(ctx context.Context) error) error
}
