-- API keys that stop working at a set instant (createApiKey's expiresAt, and the old key of rotateApiKey);
-- null never expires. Webhook signing key rotation with an overlap (docs/webhooks.md, "Rotating the signing
-- key"): per mode, the key that was replaced keeps signing beside the new one until its expiry.
ALTER TABLE "api_keys" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
ALTER TABLE "business_profiles"
  ADD COLUMN "test_previous_payment_response_hash_key_encrypted" TEXT,
  ADD COLUMN "live_previous_payment_response_hash_key_encrypted" TEXT,
  ADD COLUMN "test_previous_payment_response_hash_key_expires_at" TIMESTAMPTZ(3),
  ADD COLUMN "live_previous_payment_response_hash_key_expires_at" TIMESTAMPTZ(3),
  ADD COLUMN "test_webhook_signing_key_rotated_at" TIMESTAMPTZ(3),
  ADD COLUMN "live_webhook_signing_key_rotated_at" TIMESTAMPTZ(3);
