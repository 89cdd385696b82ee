-- +goose Up
-- Room on each page of checkout_sessions for a HOT update (issue 10).
--
-- A confirmation's first write (beginCharge) sets the charge in flight on the session:
-- confirm_attempts, charging_attempt and the pending charge's columns. None of them is in an
-- index, nor in the predicate of one (checkout_sessions_due and checkout_sessions_scope_due
-- are WHERE status = 'open'), so PostgreSQL can write it as a heap-only tuple, with no new
-- entry in any of the table's five indexes, when the new row version fits on the page of the
-- old one. A session row is large (about 800 bytes: some ten per page), and with the default
-- fillfactor 100 its page is full once the sessions created after it filled it; a buyer who
-- pays minutes after the session was created then meets a full page and the update inserts
-- into every index. fillfactor 70 keeps room for about three row versions on each page.
-- (The completing update changes status, which the partial indexes' predicate names: never
-- HOT, whatever the fillfactor.)
--
-- Measured (n_tup_hot_upd of checkout_sessions, 200 sessions all created before any was
-- confirmed): fillfactor 100: 112 of the 200 first updates HOT; 85: 103 (one spare row
-- version per page is not enough); 70: 200. Confirmed right after creation (8 clients, 400
-- payments): 100: 377 of 400; 85: 396; 70: 399.
--
-- charge_attempts and payments keep the default: every update of theirs changes status, which
-- partial indexes name (charge_attempts_one_pending, charge_attempts_pending;
-- payments_settling), so free space would buy them nothing (measured: 0 of 400
-- charge_attempts updates HOT; a confirmation does not update payments at all).
--
-- The setting applies to pages filled from now on; existing pages keep what they hold.
ALTER TABLE checkout_sessions SET (fillfactor = 70);

-- +goose Down
ALTER TABLE checkout_sessions RESET (fillfactor);
