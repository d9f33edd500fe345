-- Mandates: a customer's permission to charge a saved card off session, one per setup payment; and a keyed
-- hash of each saved card's processor token, so a processor's "revoked" callback finds its card.

-- CreateEnum
CREATE TYPE "MandateStatus" AS ENUM ('ACTIVE', 'REVOKED');

-- AlterTable
ALTER TABLE "saved_payment_methods" ADD COLUMN "processor_token_hash" TEXT;
ALTER TABLE "payment_intents" ADD COLUMN "mandate_id" TEXT;

-- CreateTable
CREATE TABLE "mandates" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "profile_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "customer_id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "saved_payment_method_id" TEXT NOT NULL,
    "status" "MandateStatus" NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    "revoked_by" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mandates_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "mandates_payment_id_key" ON "mandates"("payment_id");
CREATE INDEX "mandates_merchant_id_mode_customer_id_idx" ON "mandates"("merchant_id", "mode", "customer_id");
CREATE INDEX "mandates_saved_payment_method_id_idx" ON "mandates"("saved_payment_method_id");
CREATE INDEX "saved_payment_methods_connector_account_id_processor_token_hash_idx" ON "saved_payment_methods"("connector_account_id", "processor_token_hash");

-- AddForeignKey
ALTER TABLE "mandates" ADD CONSTRAINT "mandates_saved_payment_method_id_fkey" FOREIGN KEY ("saved_payment_method_id") REFERENCES "saved_payment_methods"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
