-- Why an order needs an operator (docs/DESIGN.md §Every order ends): a value of the Attention
-- enum (REFUND_REFUSED, REFUND_AGED, UNKNOWN_AGED), a detail and since when. Written by the
-- order's workflow when the order cannot end on its own, cleared when it does; read by
-- reconciliation and the orders-needing-attention metric. Status and version are untouched.
ALTER TABLE orders ADD COLUMN attention text;
ALTER TABLE orders ADD COLUMN attention_detail text;
ALTER TABLE orders ADD COLUMN attention_since timestamptz;
CREATE INDEX orders_needing_attention ON orders (attention) WHERE attention IS NOT NULL;
