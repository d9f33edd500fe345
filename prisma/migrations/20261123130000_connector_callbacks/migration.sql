-- Incoming connector callbacks: every one is kept (raw body, headers without secrets, what verification
-- said, what was done) for support and replay; and where a connector account's callbacks are registered.

-- CreateEnum
CREATE TYPE "CallbackVerification" AS ENUM ('VERIFIED', 'FAILED', 'NOT_IMPLEMENTED');

-- CreateTable
CREATE TABLE "connector_callbacks" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "connector_account_id" TEXT NOT NULL,
    "connector_name" TEXT NOT NULL,
    "headers" JSONB NOT NULL,
    "body" BYTEA NOT NULL,
    "verification" "CallbackVerification" NOT NULL,
    "outcome" TEXT NOT NULL,
    "processor_event_id" TEXT,
    "processor_event_type" TEXT,
    "payment_id" TEXT,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connector_callbacks_pkey" PRIMARY KEY ("id")
);

-- AlterTable
ALTER TABLE "connector_accounts" ADD COLUMN "webhook_url" TEXT,
ADD COLUMN "webhook_endpoint_id" TEXT,
ADD COLUMN "webhook_registered_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "connector_callbacks_connector_account_id_received_at_idx" ON "connector_callbacks"("connector_account_id", "received_at");

-- CreateIndex
CREATE INDEX "connector_callbacks_payment_id_idx" ON "connector_callbacks"("payment_id");

-- AddForeignKey
ALTER TABLE "connector_callbacks" ADD CONSTRAINT "connector_callbacks_connector_account_id_fkey" FOREIGN KEY ("connector_account_id") REFERENCES "connector_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
