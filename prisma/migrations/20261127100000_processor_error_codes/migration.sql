-- A declined payment shows the processor's own decline code beside ours (docs/declines.md): error_code is the
-- decline catalog's code, processor_error_code what the processor sent (Stripe's decline_code, Adyen's
-- refusalReasonCode). Payments declined before this migration have none.
ALTER TABLE "payment_intents" ADD COLUMN "processor_error_code" TEXT;
ALTER TABLE "payment_attempts" ADD COLUMN "processor_error_code" TEXT;
