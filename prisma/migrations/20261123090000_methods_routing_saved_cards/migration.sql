-- Every payment method group, routing and retries across connectors, saved cards, scheduled sync.

-- AlterTable: what each connector account accepts (empty = every currency / country).
ALTER TABLE "connector_accounts" ADD COLUMN "currencies" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "countries" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- AlterTable: the profile's routing and retry rules.
ALTER TABLE "business_profiles" ADD COLUMN "routing" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "max_retries" INTEGER NOT NULL DEFAULT 2,
ADD COLUMN "retryable_decline_codes" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- AlterTable
ALTER TABLE "payment_intents" ADD COLUMN "country" TEXT,
ADD COLUMN "sync_exhausted_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "payment_attempts" ADD COLUMN "payment_method_details" JSONB,
ADD COLUMN "next_action" JSONB,
ADD COLUMN "saved_payment_method_id" TEXT;

-- CreateTable
CREATE TABLE "saved_payment_methods" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "customer_id" TEXT NOT NULL,
    "connector_account_id" TEXT NOT NULL,
    "processor_token_encrypted" TEXT NOT NULL,
    "payment_method_type" TEXT NOT NULL,
    "card_brand" TEXT,
    "card_last4" TEXT,
    "card_expiry_month" INTEGER,
    "card_expiry_year" INTEGER,
    "card_holder_name" TEXT,
    "card_fingerprint" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "saved_payment_methods_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "saved_payment_methods_card_key" ON "saved_payment_methods"("merchant_id", "mode", "customer_id", "connector_account_id", "card_fingerprint");

-- AddForeignKey
ALTER TABLE "saved_payment_methods" ADD CONSTRAINT "saved_payment_methods_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchant_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "saved_payment_methods" ADD CONSTRAINT "saved_payment_methods_connector_account_id_fkey" FOREIGN KEY ("connector_account_id") REFERENCES "connector_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
