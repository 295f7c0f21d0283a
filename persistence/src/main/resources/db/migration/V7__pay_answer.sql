-- The first answer to each keyed pay (POST /orders/{id}/pay with an Idempotency-Key), written by
-- the API once the pay has its answer, first one wins. The engine answers a retry of the key only
-- while the update id is in the order's current run; a retry that reaches a newer run (a late
-- notice, continue-as-new, a repair) or no run at all (its history past retention) is answered
-- from here with the same status and body (docs/DESIGN.md §Idempotency-Key lifetimes). Kept as
-- long as the order: no job deletes rows of either table. Owned by PayAnswers.
CREATE TABLE pay_answer (
  order_id        text        NOT NULL,
  idempotency_key text        NOT NULL,
  http_status     smallint    NOT NULL CHECK (http_status BETWEEN 200 AND 499),
  outcome         text,
  status          text        CHECK (status IN ('CREATED','PAYING','UNKNOWN','PAID','FAILED','CANCELLED','REFUNDING','REFUNDED')),
  version         integer     NOT NULL,
  answered_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (order_id, idempotency_key)
);
