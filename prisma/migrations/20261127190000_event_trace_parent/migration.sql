-- The W3C traceparent of the change that recorded an event, when the service traces (docs/operations.md,
-- "Tracing"): its deliveries, and the forwards of `payments listen`, carry it so the merchant can join the
-- trace. Null for events recorded without tracing, and for every earlier event.
ALTER TABLE "events" ADD COLUMN "trace_parent" TEXT;
