-- Disputes: chargebacks reported by processors, one row per processor dispute (the unique key makes a
-- duplicate "opened" callback find the row rather than open a second one).

-- CreateEnum
CREATE TYPE "DisputeStatus" AS ENUM ('OPENED', 'ACCEPTED', 'CHALLENGED', 'WON', 'LOST', 'EXPIRED', 'CANCELLED');

-- CreateTable
CREATE TABLE "disputes" (
    "id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "profile_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "attempt_id" TEXT NOT NULL,
    "connector_account_id" TEXT NOT NULL,
    "connector_name" TEXT NOT NULL,
    "connector_dispute_id" TEXT NOT NULL,
    "status" "DisputeStatus" NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "reason" TEXT,
    "evidence_due_by" TIMESTAMPTZ(3),
    "evidence" JSONB,
    "version" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "disputes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "disputes_connector_account_id_connector_dispute_id_key" ON "disputes"("connector_account_id", "connector_dispute_id");
CREATE INDEX "disputes_payment_id_created_at_idx" ON "disputes"("payment_id", "created_at");
CREATE INDEX "disputes_merchant_id_mode_created_at_id_idx" ON "disputes"("merchant_id", "mode", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "disputes" ADD CONSTRAINT "disputes_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payment_intents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
