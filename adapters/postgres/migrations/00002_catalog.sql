-- +goose Up
-- The product and price catalog (interface 2.4, 2.5; D13). Lists are newest first by seq within
-- merchant + environment; every query filters by both.

-- Primary keys lead with the tenant (merchant_id, environment, id): a lookup by id always
-- filters by scope, and this key serves it whatever the planner's statistics say (a fresh,
-- never-analysed table otherwise picks the list index and filters by id). It is also the
-- shape sharding by merchant_id needs, and the composite foreign keys below keep every
-- reference inside one tenant.
CREATE TABLE products (
    id                    text NOT NULL,
    merchant_id           text NOT NULL REFERENCES merchants(id),
    environment           text NOT NULL CHECK (environment IN ('test', 'live')),
    seq                   bigserial NOT NULL,
    name                  text NOT NULL,
    description           text NOT NULL DEFAULT '',
    tax_code              text NOT NULL DEFAULT '',
    unit_label            text NOT NULL DEFAULT '',
    statement_descriptor  text NOT NULL DEFAULT '',
    url                   text NOT NULL DEFAULT '',
    images                text[] NOT NULL DEFAULT '{}',
    tags                  text[] NOT NULL DEFAULT '{}',
    shippable             boolean,
    package_dimensions    jsonb,                     -- {length, width, height, weight}
    metadata              jsonb NOT NULL DEFAULT '{}',
    default_price         text,
    active                boolean NOT NULL,
    created               timestamptz NOT NULL,
    updated               timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id)
);
CREATE INDEX products_scope ON products (merchant_id, environment, seq DESC);
CREATE INDEX products_scope_active ON products (merchant_id, environment, active, seq DESC);

CREATE TABLE prices (
    id                        text NOT NULL,
    merchant_id               text NOT NULL REFERENCES merchants(id),
    environment               text NOT NULL CHECK (environment IN ('test', 'live')),
    product_id                text NOT NULL,
    seq                       bigserial NOT NULL,
    currency                  text NOT NULL,            -- uppercase ISO 4217
    unit_amount               bigint NOT NULL CHECK (unit_amount > 0),
    nickname                  text NOT NULL DEFAULT '',
    lookup_key                text NOT NULL DEFAULT '',  -- '' = none
    tax_behavior              text NOT NULL CHECK (tax_behavior IN ('inclusive', 'exclusive', 'unspecified')),
    recurring_interval        text CHECK (recurring_interval IN ('day', 'week', 'month', 'year')), -- NULL = one_time
    recurring_interval_count  integer,
    recurring_trial_days      integer,
    recurring_usage_type      text,
    metadata                  jsonb NOT NULL DEFAULT '{}',
    active                    boolean NOT NULL,
    created                   timestamptz NOT NULL,
    updated                   timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment, product_id) REFERENCES products (merchant_id, environment, id)
);
CREATE INDEX prices_product ON prices (merchant_id, environment, product_id, seq DESC);
CREATE INDEX prices_product_active ON prices (merchant_id, environment, product_id, active, seq DESC);
CREATE INDEX prices_scope ON prices (merchant_id, environment, seq DESC);
-- lookup_key is unique among a merchant environment's active prices (D13).
CREATE UNIQUE INDEX prices_lookup_key_active ON prices (merchant_id, environment, lookup_key)
    WHERE active AND lookup_key <> '';

-- The default price exists once the transaction that links it commits (inline price on create).
ALTER TABLE products ADD CONSTRAINT products_default_price_fkey
    FOREIGN KEY (merchant_id, environment, default_price) REFERENCES prices (merchant_id, environment, id)
    DEFERRABLE INITIALLY DEFERRED;

-- +goose Down
ALTER TABLE products DROP CONSTRAINT products_default_price_fkey;
DROP TABLE prices;
DROP TABLE products;
