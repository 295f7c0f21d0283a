-- The API's sold-out gate keeps an in-memory view of which SKUs are sold out (StockView). It learns
-- of changes through NOTIFY on channel sku_stock, sent only when a SKU appears or disappears or its
-- sold-out state flips (remaining reaches 0 or leaves it): a transaction that notifies takes a
-- global lock on the notification queue at commit, which would serialize the admission commits on
-- a hot SKU row if every decrement notified. The payload is JSON: {"tenant", "sku", "remaining"}
-- (remaining null for a deleted SKU). A NOTIFY is sent at commit only, so a rolled-back take
-- (SOLD_OUT / USER_LIMIT) sends nothing.
CREATE FUNCTION sku_stock_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('sku_stock', json_build_object('tenant', OLD.tenant, 'sku', OLD.sku, 'remaining', NULL)::text);
    RETURN OLD;
  END IF;
  PERFORM pg_notify('sku_stock', json_build_object('tenant', NEW.tenant, 'sku', NEW.sku, 'remaining', NEW.remaining)::text);
  RETURN NEW;
END;
$$;

-- the WHEN clause is evaluated without calling the function: an ordinary decrement costs one comparison
CREATE TRIGGER sku_stock_flip AFTER UPDATE OF remaining ON sku FOR EACH ROW
  WHEN ((OLD.remaining = 0) IS DISTINCT FROM (NEW.remaining = 0))
  EXECUTE FUNCTION sku_stock_notify();

CREATE TRIGGER sku_stock_appears AFTER INSERT OR DELETE ON sku FOR EACH ROW
  EXECUTE FUNCTION sku_stock_notify();
