-- Payment links: reusable hosted payment page URLs; each use creates its own payment.

-- AlterTable
ALTER TABLE "payment_intents" ADD COLUMN "payment_link_id" TEXT;

-- CreateTable
CREATE TABLE "payment_links" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "profile_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" INTEGER,
    "min_amount" INTEGER,
    "max_amount" INTEGER,
    "description" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payment_links_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "payment_intents_payment_link_id_idx" ON "payment_intents"("payment_link_id");
CREATE INDEX "payment_links_merchant_id_mode_created_at_idx" ON "payment_links"("merchant_id", "mode", "created_at");
