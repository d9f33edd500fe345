-- Session expiry: a payment not confirmed within its profile's session expiry (15 minutes by default)
-- expires, intent and attempt both EXPIRED (payment_expired).

-- AlterEnum
ALTER TYPE "IntentStatus" ADD VALUE 'EXPIRED';
ALTER TYPE "AttemptStatus" ADD VALUE 'EXPIRED';

-- AlterTable
ALTER TABLE "business_profiles" ADD COLUMN "session_expiry_seconds" INTEGER NOT NULL DEFAULT 900;
ALTER TABLE "payment_intents" ADD COLUMN "expires_at" TIMESTAMPTZ(3);

-- CreateIndex: the sweeper's search for unconfirmed payments past their expiry.
CREATE INDEX "payment_intents_status_expires_at_idx" ON "payment_intents"("status", "expires_at");
