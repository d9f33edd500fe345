-- A failed attempt keeps the processor's error body beside its codes (docs/payments.md): Stripe's error object,
-- Adyen's refusal or HTTP error, the sandbox's error. It is scrubbed before it is written (no card data, no secrets,
-- at most 8 KB), and the service writes JSON objects only, which the CHECK holds it to. Attempts that failed before
-- this migration have none.
ALTER TABLE "payment_attempts" ADD COLUMN "processor_error" JSONB;
ALTER TABLE "payment_attempts" ADD CONSTRAINT "payment_attempts_processor_error_object" CHECK (jsonb_typeof("processor_error") = 'object');
