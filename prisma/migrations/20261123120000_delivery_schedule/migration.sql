-- The retry schedule, exactly: automatic attempts are counted apart from manual retries (the schedule and
-- the INITIAL / AUTOMATIC_RETRY label follow them alone), and each attempt records when it started, the
-- instant the next delay is counted from.
ALTER TABLE "events" ADD COLUMN "automatic_attempts" INTEGER NOT NULL DEFAULT 0;

ALTER TABLE "webhook_delivery_attempts" ADD COLUMN "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
