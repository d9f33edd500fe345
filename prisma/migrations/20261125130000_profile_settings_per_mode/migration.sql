-- Every profile setting that payments, payouts or webhooks read is kept per mode, as the webhook URLs already
-- were: a test key changes only the test settings, never what a live payment, payout or webhook does. Today's
-- values become both modes' values, so existing profiles keep behaving as they did.
ALTER TABLE "business_profiles" RENAME COLUMN "payment_response_hash_key_encrypted" TO "test_payment_response_hash_key_encrypted";
ALTER TABLE "business_profiles" RENAME COLUMN "routing" TO "test_routing";
ALTER TABLE "business_profiles" RENAME COLUMN "max_retries" TO "test_max_retries";
ALTER TABLE "business_profiles" RENAME COLUMN "retryable_decline_codes" TO "test_retryable_decline_codes";
ALTER TABLE "business_profiles" RENAME COLUMN "session_expiry_seconds" TO "test_session_expiry_seconds";
ALTER TABLE "business_profiles" RENAME COLUMN "allow_partial_authorization" TO "test_allow_partial_authorization";
ALTER TABLE "business_profiles" RENAME COLUMN "surcharges" TO "test_surcharges";
ALTER TABLE "business_profiles" RENAME COLUMN "payout_limit" TO "test_payout_limit";

ALTER TABLE "business_profiles" ADD COLUMN "live_payment_response_hash_key_encrypted" TEXT,
ADD COLUMN "live_routing" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "live_max_retries" INTEGER NOT NULL DEFAULT 2,
ADD COLUMN "live_retryable_decline_codes" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "live_session_expiry_seconds" INTEGER NOT NULL DEFAULT 900,
ADD COLUMN "live_allow_partial_authorization" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "live_surcharges" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN "live_payout_limit" INTEGER;

UPDATE "business_profiles" SET
  "live_payment_response_hash_key_encrypted" = "test_payment_response_hash_key_encrypted",
  "live_routing" = "test_routing",
  "live_max_retries" = "test_max_retries",
  "live_retryable_decline_codes" = "test_retryable_decline_codes",
  "live_session_expiry_seconds" = "test_session_expiry_seconds",
  "live_allow_partial_authorization" = "test_allow_partial_authorization",
  "live_surcharges" = "test_surcharges",
  "live_payout_limit" = "test_payout_limit";

ALTER TABLE "business_profiles" ALTER COLUMN "live_payment_response_hash_key_encrypted" SET NOT NULL;
