-- Publishable keys are public by design (they sit in merchants' web pages), so the service keeps them and can
-- hand one to the hosted checkout a payment link opens. Secret keys stay hash-only. Keys issued before this
-- migration have no stored form: a merchant issues a new publishable key to use payment links.
ALTER TABLE "api_keys" ADD COLUMN "publishable_key" TEXT;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_only_publishable_kept" CHECK ("publishable_key" IS NULL OR "type" = 'PUBLISHABLE');
