-- +goose Up
-- Charges outside transactions (issue 10 §2, §3).
--
-- A charge attempt is written and committed before the processor is called, and its outcome
-- is applied by a second transaction, exactly once: status moves pending → applied (or
-- abandoned, when the processor never saw the charge). An attempt left pending (the outcome
-- failed to commit, the process died) is resolved by the charge-attempt sweep, which asks the
-- processor for the attempt's idempotency key.
CREATE TABLE charge_attempts (
    merchant_id     text NOT NULL REFERENCES merchants(id),
    environment     text NOT NULL CHECK (environment IN ('test', 'live')),
    -- The processor idempotency key: "<reference>:<number>".
    idempotency_key text NOT NULL,
    -- What is being paid: a checkout session (cs_) today, an invoice (in_) next.
    reference       text NOT NULL,
    number          integer NOT NULL CHECK (number > 0),
    -- charge: a new charge (Processor.Charge); action: the buyer's answer to 3-D Secure on
    -- the charge processor_ref (Processor.CompleteAction with approve).
    kind            text NOT NULL CHECK (kind IN ('charge', 'action')),
    amount          bigint NOT NULL CHECK (amount >= 0),
    currency        text NOT NULL,
    method          text NOT NULL CHECK (method IN ('card', 'sepa_debit')),
    processor_ref   text,
    approve         boolean NOT NULL DEFAULT false,
    status          text NOT NULL CHECK (status IN ('pending', 'applied', 'abandoned')),
    -- The processor's outcome once applied (succeeded, processing, failed, requires_action).
    outcome         text,
    -- The scope's time of the charge (the test clock in test mode): outcome events are
    -- stamped with it, whoever applies them.
    charged_at      timestamptz NOT NULL,
    -- Wall-clock time the attempt was recorded: the sweep's grace is measured on it, never on a
    -- test clock, so advancing a test clock never resolves a charge still in flight.
    started_at      timestamptz NOT NULL DEFAULT now(),
    resolved_at     timestamptz,
    PRIMARY KEY (merchant_id, environment, idempotency_key),
    CHECK ((kind = 'action') = (processor_ref IS NOT NULL)),
    CHECK ((status = 'applied') = (outcome IS NOT NULL))
);
-- One charge at a time per payable: a second confirmation while one is in flight is refused
-- by this index (and waits for the first to be applied).
CREATE UNIQUE INDEX charge_attempts_one_pending ON charge_attempts (merchant_id, environment, reference)
    WHERE status = 'pending';
-- The sweep: pending attempts by age.
CREATE INDEX charge_attempts_pending ON charge_attempts (started_at) WHERE status = 'pending';

-- The attempt in flight on a session (its idempotency key), set with the attempt and cleared
-- when its outcome is applied: while it is set the session does not expire (the expiry sweep
-- skips it) and takes no second charge.
ALTER TABLE checkout_sessions ADD COLUMN charging_attempt text;

-- The sandbox processor's own memory of its charges, keyed by idempotency key, so that a
-- retried charge and Processor.Lookup answer what the first call answered. It plays the part
-- of a live processor's records; Kassa's modules never read it. result holds no card number
-- and no IBAN (ports.ChargeResult never carries them).
CREATE TABLE sandbox_charges (
    merchant_id     text NOT NULL,
    environment     text NOT NULL,
    idempotency_key text NOT NULL,
    result          jsonb NOT NULL,
    created         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, environment, idempotency_key)
);

-- What the ledger needs of a payment (D7, D16): the exact rate the fee used (1 EUR = fee_rate
-- units of the charge currency; 1 for EUR charges), and when its funds become available
-- (NULL while a delayed payment is processing).
ALTER TABLE payments
    ADD COLUMN fee_rate     numeric,
    ADD COLUMN available_at timestamptz;

-- +goose Down
ALTER TABLE payments DROP COLUMN available_at, DROP COLUMN fee_rate;
ALTER TABLE checkout_sessions DROP COLUMN charging_attempt;
DROP TABLE sandbox_charges;
DROP TABLE charge_attempts;
