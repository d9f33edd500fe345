-- Payouts: money sent from the merchant to a card or bank account, with the profile's payout limit.

-- CreateEnum
CREATE TYPE "PayoutStatus" AS ENUM ('CREATED', 'INITIATED', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED', 'REVERSED', 'NOT_PERMITTED');

-- AlterTable
ALTER TABLE "business_profiles" ADD COLUMN "payout_limit" INTEGER;

-- CreateTable
CREATE TABLE "payouts" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "profile_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "connector_account_id" TEXT,
    "connector_name" TEXT,
    "connector_payout_id" TEXT,
    "status" "PayoutStatus" NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "country" TEXT,
    "description" TEXT,
    "destination_type" TEXT NOT NULL,
    "destination_last4" TEXT NOT NULL,
    "error_code" TEXT,
    "error_message" TEXT,
    "sync_exhausted_at" TIMESTAMPTZ(3),
    "version" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payouts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "payouts_connector_account_id_connector_payout_id_idx" ON "payouts"("connector_account_id", "connector_payout_id");
CREATE INDEX "payouts_merchant_id_mode_created_at_id_idx" ON "payouts"("merchant_id", "mode", "created_at" DESC, "id" DESC);
