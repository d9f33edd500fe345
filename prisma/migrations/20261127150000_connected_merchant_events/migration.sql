-- A platform's business profile may receive its connected merchants' events (docs/platforms.md): per mode, like
-- every profile setting, off for every profile. Each event of a connected merchant is then also written for each
-- such profile of its platform, in the same statement, so events are unique per object version, event type and
-- the profile they are written for.
ALTER TABLE "business_profiles" ADD COLUMN "test_receive_connected_merchant_events" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "business_profiles" ADD COLUMN "live_receive_connected_merchant_events" BOOLEAN NOT NULL DEFAULT false;

DROP INDEX "events_object_id_object_version_event_type_key";
CREATE UNIQUE INDEX "events_object_id_object_version_event_type_profile_id_key" ON "events"("object_id", "object_version", "event_type", "profile_id");

-- A refund's or dispute's processor merchant, copied from the attempt it concerns when it is made (as its
-- connector account is), so its events and reads need no join; rows made before this migration get their
-- attempt's.
ALTER TABLE "refunds" ADD COLUMN "processor_merchant_id" TEXT;
ALTER TABLE "disputes" ADD COLUMN "processor_merchant_id" TEXT;
UPDATE "refunds" r SET "processor_merchant_id" = a."processor_merchant_id" FROM "payment_attempts" a WHERE a."id" = r."attempt_id" AND a."processor_merchant_id" IS NOT NULL;
UPDATE "disputes" d SET "processor_merchant_id" = a."processor_merchant_id" FROM "payment_attempts" a WHERE a."id" = d."attempt_id" AND a."processor_merchant_id" IS NOT NULL;
