-- Payments core: connector accounts, payment intents and attempts, their status history, idempotency.

-- CreateEnum
CREATE TYPE "IntentStatus" AS ENUM ('REQUIRES_PAYMENT_METHOD', 'REQUIRES_CONFIRMATION', 'PROCESSING', 'REQUIRES_CUSTOMER_ACTION', 'REQUIRES_CAPTURE', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'PARTIALLY_CAPTURED');

-- CreateEnum
CREATE TYPE "AttemptStatus" AS ENUM ('PAYMENT_METHOD_AWAITED', 'CONFIRMATION_AWAITED', 'PENDING', 'DEVICE_DATA_COLLECTION_PENDING', 'AUTHENTICATION_PENDING', 'AUTHENTICATION_SUCCESSFUL', 'AUTHENTICATION_FAILED', 'AUTHORIZED', 'AUTHORIZATION_FAILED', 'CHARGED', 'CAPTURE_INITIATED', 'CAPTURE_FAILED', 'VOIDED', 'FAILURE', 'PARTIAL_CHARGED', 'VOID_INITIATED', 'VOID_FAILED');

-- CreateEnum
CREATE TYPE "CaptureMethod" AS ENUM ('AUTOMATIC', 'MANUAL');

-- CreateEnum
CREATE TYPE "AuthenticationType" AS ENUM ('THREE_DS', 'NO_THREE_DS');

-- CreateTable
CREATE TABLE "connector_accounts" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "connector_name" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "credentials_encrypted" TEXT NOT NULL,
    "webhook_secret_encrypted" TEXT,
    "payment_methods" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "connector_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payment_intents" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "profile_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "status" "IntentStatus" NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "capture_method" "CaptureMethod" NOT NULL,
    "authentication_type" "AuthenticationType" NOT NULL,
    "amount_capturable" INTEGER NOT NULL DEFAULT 0,
    "amount_received" INTEGER NOT NULL DEFAULT 0,
    "customer_id" TEXT,
    "description" TEXT,
    "metadata" JSONB,
    "return_url" TEXT,
    "setup_future_usage" TEXT,
    "connectors" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "active_attempt_id" TEXT,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "cancellation_reason" TEXT,
    "error_code" TEXT,
    "error_message" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payment_intents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payment_attempts" (
    "id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "attempt_number" INTEGER NOT NULL,
    "status" "AttemptStatus" NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "capture_method" "CaptureMethod" NOT NULL,
    "authentication_type" "AuthenticationType" NOT NULL,
    "connector_account_id" TEXT,
    "connector_name" TEXT,
    "connector_transaction_id" TEXT,
    "amount_capturable" INTEGER NOT NULL DEFAULT 0,
    "amount_captured" INTEGER NOT NULL DEFAULT 0,
    "payment_method_type" TEXT,
    "card_brand" TEXT,
    "card_last4" TEXT,
    "card_expiry_month" INTEGER,
    "card_expiry_year" INTEGER,
    "card_holder_name" TEXT,
    "card_fingerprint" TEXT,
    "redirect_url" TEXT,
    "error_code" TEXT,
    "error_message" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payment_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payment_status_history" (
    "id" BIGSERIAL NOT NULL,
    "payment_id" TEXT NOT NULL,
    "attempt_id" TEXT,
    "subject" TEXT NOT NULL,
    "from_status" TEXT,
    "to_status" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payment_status_history_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response_body" TEXT,
    "status_code" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("scope","key")
);

-- CreateIndex
CREATE INDEX "connector_accounts_merchant_id_mode_idx" ON "connector_accounts"("merchant_id", "mode");

-- CreateIndex
CREATE INDEX "payment_intents_merchant_id_mode_created_at_id_idx" ON "payment_intents"("merchant_id", "mode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "payment_attempts_connector_transaction_id_idx" ON "payment_attempts"("connector_transaction_id");

-- CreateIndex
CREATE UNIQUE INDEX "payment_attempts_payment_id_attempt_number_key" ON "payment_attempts"("payment_id", "attempt_number");

-- CreateIndex
CREATE INDEX "payment_status_history_payment_id_id_idx" ON "payment_status_history"("payment_id", "id");

-- CreateIndex
CREATE INDEX "idempotency_records_created_at_idx" ON "idempotency_records"("created_at");

-- AddForeignKey
ALTER TABLE "connector_accounts" ADD CONSTRAINT "connector_accounts_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchant_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payment_attempts" ADD CONSTRAINT "payment_attempts_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payment_intents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payment_status_history" ADD CONSTRAINT "payment_status_history_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payment_intents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
