-- A connected merchant's own account at a processor (docs/platforms.md, "Processor accounts"): its Stripe Connect
-- account (acct_…) or its Adyen for Platforms balance account (BA…), to which the platform's payments pass its
-- share. One per merchant, mode and connector; the platform sets it (the service checks the id's shape).
CREATE TABLE "merchant_processor_accounts" (
  "merchant_id" TEXT NOT NULL REFERENCES "merchant_accounts"("id") ON DELETE RESTRICT,
  "mode" "Mode" NOT NULL,
  "connector_name" TEXT NOT NULL,
  "account_id" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL,
  PRIMARY KEY ("merchant_id", "mode", "connector_name"),
  CONSTRAINT "merchant_processor_accounts_connector_name_check" CHECK ("connector_name" IN ('stripe', 'adyen'))
);
