-- Inventory: conservation per SKU is total = remaining + held + confirmed.
CREATE TABLE sku (
  tenant          text    NOT NULL,
  sku             text    NOT NULL,
  total           integer NOT NULL CHECK (total >= 0),
  remaining       integer NOT NULL CHECK (remaining >= 0),
  unit_price      bigint  NOT NULL CHECK (unit_price > 0),
  per_user_limit  integer NOT NULL CHECK (per_user_limit > 0),
  PRIMARY KEY (tenant, sku)
);

CREATE TABLE reservation (
  reservation_key text PRIMARY KEY,
  tenant          text    NOT NULL,
  sku             text    NOT NULL,
  subject         text    NOT NULL,
  quantity        integer NOT NULL CHECK (quantity > 0),
  status          text    NOT NULL CHECK (status IN ('HELD', 'CONFIRMED', 'RELEASED')),
  expires_at      timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reservation_by_subject ON reservation (tenant, sku, subject, status);

CREATE SEQUENCE order_number;

CREATE TABLE orders (
  order_id        text PRIMARY KEY,
  tenant          text    NOT NULL,
  subject         text    NOT NULL,
  request_key     text    NOT NULL,
  payload         text    NOT NULL,
  sku             text    NOT NULL,
  quantity        integer NOT NULL,
  amount          bigint  NOT NULL,
  note            text,
  status          text    NOT NULL CHECK (status IN ('CREATED','PAYING','UNKNOWN','PAID','FAILED','CANCELLED','REFUNDING','REFUNDED')),
  version         integer NOT NULL,
  reservation_key text    NOT NULL,
  reserve_attempt integer NOT NULL DEFAULT 1,
  workflow_id     text    NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant, subject, request_key)
);
CREATE INDEX orders_by_owner ON orders (tenant, subject, order_id);

CREATE TABLE order_transition (
  id          bigserial PRIMARY KEY,
  order_id    text    NOT NULL REFERENCES orders (order_id),
  from_status text,
  to_status   text    NOT NULL,
  version     integer NOT NULL,
  cause       text    NOT NULL,
  at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (order_id, version)
);

-- Every arrival of every callback, with the effect it had (NULL until the workflow applied it).
CREATE TABLE payment_notification (
  id             bigserial PRIMARY KEY,
  notify_id      text   NOT NULL,
  merchant_order text   NOT NULL,
  kind           text   NOT NULL,
  amount         bigint NOT NULL,
  txn            text,
  received_at    timestamptz NOT NULL DEFAULT now(),
  effect         text,
  applied_at     timestamptz
);
CREATE INDEX payment_notification_by_order ON payment_notification (merchant_order);

CREATE TABLE outbox (
  event_id      bigserial PRIMARY KEY,
  order_id      text    NOT NULL,
  event_type    text    NOT NULL,
  order_version integer NOT NULL,
  payload       text    NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  published_at  timestamptz
);
CREATE INDEX outbox_unpublished ON outbox (event_id) WHERE published_at IS NULL;

CREATE TABLE principals (
  tenant  text    NOT NULL,
  subject text    NOT NULL,
  revoked boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant, subject)
);
