-- Platforms and their connected merchants (docs/platforms.md): a platform merchant (is_platform) creates merchants
-- connected to it (platform_merchant_id) and acts for them with its own secret key. One level only: a platform is
-- never itself connected, which the CHECK holds. A payment created by a platform acting for a connected merchant
-- names that platform (initiated_by_platform_id); payments made before this migration, and every other, have none.
ALTER TABLE "merchant_accounts" ADD COLUMN "is_platform" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "merchant_accounts" ADD COLUMN "platform_merchant_id" TEXT;
ALTER TABLE "merchant_accounts" ADD CONSTRAINT "merchant_accounts_platform_merchant_id_fkey" FOREIGN KEY ("platform_merchant_id") REFERENCES "merchant_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "merchant_accounts" ADD CONSTRAINT "merchant_accounts_platform_not_connected" CHECK (NOT ("is_platform" AND "platform_merchant_id" IS NOT NULL));
CREATE INDEX "merchant_accounts_platform_merchant_id_created_at_idx" ON "merchant_accounts"("platform_merchant_id", "created_at" DESC);

ALTER TABLE "payment_intents" ADD COLUMN "initiated_by_platform_id" TEXT;
