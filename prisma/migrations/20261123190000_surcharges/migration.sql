-- Surcharges: rules per payment method type on the business profile, the amount added to a payment at
-- confirm, and a second event of one transition (a surcharged payment's surcharge_payment_succeeded beside
-- its payment_succeeded): events stay unique per object version and event type.

-- AlterTable
ALTER TABLE "business_profiles" ADD COLUMN "surcharges" JSONB NOT NULL DEFAULT '[]';
ALTER TABLE "payment_intents" ADD COLUMN "surcharge_amount" INTEGER NOT NULL DEFAULT 0;

-- DropIndex
DROP INDEX "events_object_id_object_version_key";

-- CreateIndex
CREATE UNIQUE INDEX "events_object_id_object_version_event_type_key" ON "events"("object_id", "object_version", "event_type");
