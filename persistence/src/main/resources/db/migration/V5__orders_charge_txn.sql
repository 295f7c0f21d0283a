-- The channel's transaction id of the charge that settled the order (PAID, or REFUNDING when the
-- charge could not keep its unit), written by the transition that charge made. A CHARGED notice of
-- that same charge is then answered at its arrival, without waking the order's workflow: the
-- workflow would answer DUPLICATE <status> (docs/DESIGN.md §Callbacks, "Copies of an applied notice").
ALTER TABLE orders ADD COLUMN charge_txn text;
