-- Subscriptions: a customer's mandate charged a price every period by the worker's sweep.

-- CreateEnum
CREATE TYPE "SubscriptionStatus" AS ENUM ('ACTIVE', 'PAST_DUE', 'CANCELLED');
CREATE TYPE "IntervalUnit" AS ENUM ('DAY', 'WEEK', 'MONTH');

-- CreateTable
CREATE TABLE "subscriptions" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "profile_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "customer_id" TEXT NOT NULL,
    "mandate_id" TEXT NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "interval_unit" "IntervalUnit" NOT NULL,
    "interval_count" INTEGER NOT NULL,
    "status" "SubscriptionStatus" NOT NULL,
    "anchor_at" TIMESTAMPTZ(3) NOT NULL,
    "paid_periods" INTEGER NOT NULL DEFAULT 0,
    "next_charge_at" TIMESTAMPTZ(3) NOT NULL,
    "charging_until" TIMESTAMPTZ(3),
    "last_payment_id" TEXT,
    "error_code" TEXT,
    "error_message" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "subscriptions_status_next_charge_at_idx" ON "subscriptions"("status", "next_charge_at");
CREATE INDEX "subscriptions_merchant_id_mode_customer_id_idx" ON "subscriptions"("merchant_id", "mode", "customer_id");
