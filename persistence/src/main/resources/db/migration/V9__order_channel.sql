-- The payment channel an order is paid through (docs/DESIGN.md §Data model, "Add a payment
-- channel"): the id it is registered under (PaymentChannels). Existing orders and every create
-- take the default channel, 'default'. A callback through one channel is applied only to that
-- channel's orders (CallbackResource), and answered at arrival only for them (Notifications).
ALTER TABLE orders ADD COLUMN channel text NOT NULL DEFAULT 'default';
