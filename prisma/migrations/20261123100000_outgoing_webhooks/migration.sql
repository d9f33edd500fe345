-- Outgoing webhooks: the event outbox (written in the transaction of the change it reports) and every
-- delivery attempt.

-- CreateEnum
CREATE TYPE "EventDeliveryStatus" AS ENUM ('PENDING', 'DELIVERED', 'FAILED', 'NOT_SENT');

-- CreateEnum
CREATE TYPE "DeliveryKind" AS ENUM ('INITIAL', 'AUTOMATIC_RETRY', 'MANUAL_RETRY');

-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "profile_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "event_type" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "object_id" TEXT NOT NULL,
    "object_version" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "is_test" BOOLEAN NOT NULL DEFAULT false,
    "delivery_status" "EventDeliveryStatus" NOT NULL,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_delivery_attempts" (
    "id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "attempt_number" INTEGER NOT NULL,
    "kind" "DeliveryKind" NOT NULL,
    "url" TEXT,
    "request_headers" JSONB NOT NULL,
    "response_status" INTEGER,
    "response_body" TEXT,
    "response_body_truncated" BOOLEAN NOT NULL DEFAULT false,
    "latency_ms" INTEGER NOT NULL,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_delivery_attempts_pkey" PRIMARY KEY ("id")
);

-- AlterTable: an endpoint that answered 410 Gone is disabled until its URL is set again.
ALTER TABLE "business_profiles" ADD COLUMN "test_webhook_disabled_at" TIMESTAMPTZ(3),
ADD COLUMN "live_webhook_disabled_at" TIMESTAMPTZ(3);

-- CreateIndex: one event per committed version of an object (one per transition).
CREATE UNIQUE INDEX "events_object_id_object_version_key" ON "events"("object_id", "object_version");

-- CreateIndex
CREATE INDEX "events_merchant_id_mode_created_at_id_idx" ON "events"("merchant_id", "mode", "created_at", "id");

-- CreateIndex: what the reconciler scans.
CREATE INDEX "events_delivery_status_next_attempt_at_idx" ON "events"("delivery_status", "next_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_delivery_attempts_event_id_attempt_number_key" ON "webhook_delivery_attempts"("event_id", "attempt_number");

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchant_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_delivery_attempts" ADD CONSTRAINT "webhook_delivery_attempts_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
