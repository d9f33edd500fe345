-- What an attempt asked its processor to pay on to connected merchants (docs/platforms.md, "Processor accounts"),
-- as sent at confirm: a partial capture and every refund are split from it at the processor, so what the processor
-- moves matches the ledger (docs/ledger.md). Null for attempts that paid nothing on; earlier attempts' refunds go
-- without a split, as before.
ALTER TABLE "payment_attempts" ADD COLUMN "processor_split" JSONB;
