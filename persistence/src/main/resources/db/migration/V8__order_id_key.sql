-- Order ids no longer show the sequence (docs/DESIGN.md §Trust boundaries): an order's id is
-- "ord-" and twelve digits, a keyed permutation of its order_number (OrderIds). The key is made
-- here, once per database, from PostgreSQL's strong random source (gen_random_uuid, 122 random
-- bits a UUID, two of them), so there is no setting to forget; the service reads it at its first
-- create (OrderIdIssuer). The single row is enforced by its key column. Existing orders keep
-- their ids.
CREATE TABLE order_id_key (
  one        boolean PRIMARY KEY DEFAULT true CHECK (one),
  key        bytea   NOT NULL CHECK (length(key) = 32),
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO order_id_key (key)
  VALUES (decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- The ids are no longer in creation order, so listing own orders pages by the sequence number
-- instead: seq is the order_number the id was made from. Existing orders were ord-%04d of it, so
-- their number is their id's digits; a row with any other id (none outside tests) gets a fresh
-- number in creation order. An insert that gives none (the create gives its own) takes the next
-- number of the sequence.
ALTER TABLE orders ADD COLUMN seq bigint;
UPDATE orders SET seq = substr(order_id, 5)::bigint WHERE order_id ~ '^ord-[0-9]{1,18}$';
-- the sequence goes past every number already taken before it hands out any (ids written by hand
-- may be ahead of it), so a fresh number never repeats one
SELECT setval('order_number', greatest(m, (SELECT last_value FROM order_number)), true)
  FROM (SELECT max(seq) AS m FROM orders) mx WHERE m IS NOT NULL;
UPDATE orders o SET seq = n.seq
  FROM (SELECT order_id, nextval('order_number') AS seq
        FROM (SELECT order_id FROM orders WHERE seq IS NULL ORDER BY created_at, order_id) unnumbered) n
  WHERE o.order_id = n.order_id;
ALTER TABLE orders ALTER COLUMN seq SET DEFAULT nextval('order_number');
ALTER TABLE orders ALTER COLUMN seq SET NOT NULL;

-- Own orders in creation order (OrderQueries.list and export). It replaces the index on
-- (tenant, subject, order_id), whose order no longer means anything, and still answers
-- PrincipalView's SELECT DISTINCT tenant, subject as an index-only scan.
-- Unique: keyset paging after a seq must never meet two rows of one owner with the same number.
DROP INDEX orders_by_owner;
CREATE UNIQUE INDEX orders_by_owner ON orders (tenant, subject, seq);
