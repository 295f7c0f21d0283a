-- The API's caller view (PrincipalView) polls the buyers of new orders: every order whose
-- created_at (its transaction's start) is at or after the start of the oldest transaction that
-- was open at the previous poll. This index makes that a range scan of the last moments, not a
-- read of the table.
CREATE INDEX orders_by_creation ON orders (created_at);
