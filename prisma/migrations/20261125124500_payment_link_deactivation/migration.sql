-- A merchant can deactivate a payment link (one it no longer sells through, or one being used for card
-- testing): its page says so and it takes no more uses. Payments already made through it are unchanged.
ALTER TABLE "payment_links" ADD COLUMN "deactivated_at" TIMESTAMPTZ(3);
