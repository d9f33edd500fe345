-- Refunds: their own table and state machine, and the amount they hold of each payment (kept within the
-- captured amount by a conditional update, so concurrent refunds never return more than was taken).

-- CreateEnum
CREATE TYPE "RefundStatus" AS ENUM ('PENDING', 'SUCCEEDED', 'FAILED', 'REVIEW');

-- AlterTable
ALTER TABLE "payment_intents" ADD COLUMN "amount_refunded" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "refunds" (
    "id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "profile_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "attempt_id" TEXT NOT NULL,
    "connector_account_id" TEXT NOT NULL,
    "connector_name" TEXT NOT NULL,
    "connector_refund_id" TEXT,
    "status" "RefundStatus" NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "reason" TEXT,
    "error_code" TEXT,
    "error_message" TEXT,
    "sync_exhausted_at" TIMESTAMPTZ(3),
    "version" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id")
);

-- The money rule, in the database too: refunds never hold more than was captured.
ALTER TABLE "payment_intents" ADD CONSTRAINT "payment_intents_amount_refunded_check" CHECK ("amount_refunded" >= 0 AND "amount_refunded" <= "amount_received");

-- CreateIndex
CREATE INDEX "refunds_payment_id_created_at_idx" ON "refunds"("payment_id", "created_at");
CREATE INDEX "refunds_connector_account_id_connector_refund_id_idx" ON "refunds"("connector_account_id", "connector_refund_id");
CREATE INDEX "refunds_merchant_id_mode_created_at_id_idx" ON "refunds"("merchant_id", "mode", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payment_intents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
