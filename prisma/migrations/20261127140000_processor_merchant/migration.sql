-- The merchant whose connector account an attempt was routed to, when that is not the payment's merchant: a
-- connected merchant's payment processed through its platform's account (docs/platforms.md). Set at routing
-- time with the account, so reading a payment (Payment.processorMerchantId, the webhook body's
-- processor_merchant_id) needs no join; null for every other attempt, those made before this migration included.
ALTER TABLE "payment_attempts" ADD COLUMN "processor_merchant_id" TEXT;
