-- Webhook targets that say no. A delivery whose target answers a refusal (a 3xx, or a 4xx other
-- than 408 and 429) three times in a row is `refused` instead of being retried for a day; a person
-- may resend it, which starts a new round of retries under the same id.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check
    CHECK (status IN ('pending', 'delivered', 'failed', 'refused'));
-- Refusals in a row, up to the latest attempt; any other outcome sets it back to 0.
ALTER TABLE deliveries ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0;
-- The last resend and who asked for it; retries after a resend run for `retry_for_secs` from it.
ALTER TABLE deliveries ADD COLUMN resent_at TIMESTAMPTZ;
ALTER TABLE deliveries ADD COLUMN resent_by TEXT;
-- The first line of the body of an answer other than 2xx, bounded, as the target sent it.
ALTER TABLE delivery_attempts ADD COLUMN answer TEXT;
-- Refused deliveries are listed and counted apart, and are few.
CREATE INDEX deliveries_refused ON deliveries (created_at) WHERE status = 'refused';
