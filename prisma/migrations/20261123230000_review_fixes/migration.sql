-- A subscription period's charge is a unique key of its payment (two workers can never both charge one
-- period), and a mandate keeps the processor token it was set up with (sealed, and a keyed hash to find it),
-- so re-saving the card cannot move the mandate onto a token its revocation would not name.

-- AlterTable
ALTER TABLE "payment_intents" ADD COLUMN "subscription_period" TEXT;
ALTER TABLE "mandates" ADD COLUMN "processor_token_encrypted" TEXT NOT NULL DEFAULT '';
ALTER TABLE "mandates" ADD COLUMN "processor_token_hash" TEXT NOT NULL DEFAULT '';
ALTER TABLE "mandates" ALTER COLUMN "processor_token_encrypted" DROP DEFAULT;
ALTER TABLE "mandates" ALTER COLUMN "processor_token_hash" DROP DEFAULT;

-- CreateIndex
CREATE UNIQUE INDEX "payment_intents_subscription_period_key" ON "payment_intents"("subscription_period");
CREATE INDEX "mandates_processor_token_hash_idx" ON "mandates"("processor_token_hash");

-- The saved card's token hash is no longer how revocations are found (the mandate's is).
DROP INDEX "saved_payment_methods_connector_account_id_processor_token_hash_idx";
ALTER TABLE "saved_payment_methods" DROP COLUMN "processor_token_hash";
