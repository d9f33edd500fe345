-- Finding payments (docs/api.md, "Finding payments"). The customer's email, given at createPayment, is kept on
-- the payment; null for every earlier payment.
ALTER TABLE "payment_intents" ADD COLUMN "email" TEXT;

-- An email search compares lower(email) within one merchant and mode: this index answers it without
-- reading the merchant's other payments.
CREATE INDEX "payment_intents_merchant_id_mode_lower_email_idx" ON "payment_intents" ("merchant_id", "mode", lower("email")) WHERE "email" IS NOT NULL;

-- An amount search compares the amount within one merchant and mode (one value per currency exponent).
CREATE INDEX "payment_intents_merchant_id_mode_amount_idx" ON "payment_intents" ("merchant_id", "mode", "amount");

-- A card's last four are on the attempts, which hold no merchant: the index gives the payments that tried
-- that card (about one attempt in 10,000), which the payment's primary key then narrows to the merchant.
CREATE INDEX "payment_attempts_card_last4_payment_id_idx" ON "payment_attempts" ("card_last4", "payment_id") WHERE "card_last4" IS NOT NULL;
