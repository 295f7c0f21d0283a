-- Notices can also arrive as an operator's signal (temporal CLI) instead of an HTTP callback: the
-- workflow records those itself, once per source_ref (its run and signal number).
ALTER TABLE payment_notification ADD COLUMN source text NOT NULL DEFAULT 'callback'
  CHECK (source IN ('callback', 'signal'));
ALTER TABLE payment_notification ADD COLUMN source_ref text UNIQUE;
