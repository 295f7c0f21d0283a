-- Tokens issued at or before this instant (epoch milliseconds) are refused: set by a revocation
-- and by a logout, kept by an unrevoke, so restoring a principal does not revive its old tokens.
ALTER TABLE principals ADD COLUMN tokens_not_before_ms bigint NOT NULL DEFAULT 0;

-- a principal revoked before this column existed keeps none of its earlier tokens after an unrevoke
UPDATE principals SET tokens_not_before_ms = (extract(epoch FROM now()) * 1000)::bigint WHERE revoked;
