-- Intelligent routing (docs/routing.md): a business profile's routing algorithm per mode, the active one and the
-- ones it replaced (superseded_at set), and on each payment the routing decision its confirm made.
CREATE TABLE "routing_algorithms" (
    "id" TEXT NOT NULL,
    "profile_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "algorithm" JSONB NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "superseded_at" TIMESTAMPTZ(3),

    CONSTRAINT "routing_algorithms_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "routing_algorithms_profile_id_fkey" FOREIGN KEY ("profile_id") REFERENCES "business_profiles"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- One active algorithm per profile and mode: two concurrent setRoutingAlgorithm calls cannot both stay active.
CREATE UNIQUE INDEX "routing_algorithms_active_key" ON "routing_algorithms"("profile_id", "mode") WHERE "superseded_at" IS NULL;
CREATE INDEX "routing_algorithms_profile_id_mode_created_at_idx" ON "routing_algorithms"("profile_id", "mode", "created_at" DESC);

ALTER TABLE "payment_intents" ADD COLUMN "routing" JSONB;
