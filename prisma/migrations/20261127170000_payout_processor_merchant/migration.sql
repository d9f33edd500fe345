-- A connected merchant's payout may be sent through its platform's connector account (docs/platforms.md): the
-- merchant whose account sent it, when that is not the payout's merchant, named in Payout.processorMerchantId and
-- the payout webhook's processor_merchant_id. Null for every other payout; earlier payouts were all sent through
-- their merchant's own accounts.
ALTER TABLE "payouts" ADD COLUMN "processor_merchant_id" TEXT;
