-- The fulfillment consumer's own tables, in its own schema, reached through its own pool.
CREATE TABLE ful_inbox (
  event_id    bigint PRIMARY KEY,
  received_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE fulfillment (
  order_id     text PRIMARY KEY,
  last_version integer NOT NULL,
  last_event   text    NOT NULL,
  ship_count   integer NOT NULL DEFAULT 0
);

-- every arrival with its effect, written with autocommit so redeliveries are counted too
CREATE TABLE ful_received (
  id         bigserial PRIMARY KEY,
  event_id   bigint NOT NULL,
  order_id   text   NOT NULL,
  effect     text   NOT NULL CHECK (effect IN ('APPLIED', 'DUPLICATE', 'STALE')),
  at         timestamptz NOT NULL DEFAULT now()
);
