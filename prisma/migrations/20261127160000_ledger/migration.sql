-- Platform fees, split payments and the ledger (docs/ledger.md).
--
-- A payment a platform creates may keep a fee (application_fee_amount) and split the rest among connected
-- merchants of the same platform (splits: [{"merchantId", "amount"}], their amounts adding up to the amount
-- less the fee). Every payment made before this migration has neither.
ALTER TABLE "payment_intents" ADD COLUMN "application_fee_amount" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "payment_intents" ADD COLUMN "splits" JSONB;
ALTER TABLE "payment_intents" ADD CONSTRAINT "payment_intents_application_fee_amount_check"
  CHECK ("application_fee_amount" >= 0 AND "application_fee_amount" <= "amount");

-- The ledger: append-only, double-entry. Each money movement (a capture, a refund, a dispute's withdrawal,
-- a payout, or the undoing of one) is one ledger transaction: rows sharing transaction_id whose amounts add
-- up to zero, checked when the database transaction commits (the deferred constraint trigger below). A row
-- with a merchant is that merchant's balance; a row without one is the processor side (the connector
-- account the money moved through). A merchant's balance is the sum of its rows: available once
-- available_at has passed, pending before (a processor that settles later reports when).
CREATE TABLE "ledger_entries" (
  "id" TEXT PRIMARY KEY,
  "transaction_id" TEXT NOT NULL,
  "mode" "Mode" NOT NULL,
  "currency" TEXT NOT NULL,
  "merchant_id" TEXT REFERENCES "merchant_accounts"("id") ON DELETE RESTRICT,
  "connector_account_id" TEXT,
  "role" TEXT NOT NULL,
  "type" TEXT NOT NULL,
  "source_id" TEXT NOT NULL,
  "payment_id" TEXT,
  "amount" BIGINT NOT NULL,
  "available_at" TIMESTAMPTZ(3) NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "ledger_entries_amount_check" CHECK ("amount" <> 0),
  CONSTRAINT "ledger_entries_role_check" CHECK ("role" IN ('merchant', 'application_fee', 'split', 'processor')),
  CONSTRAINT "ledger_entries_type_check" CHECK ("type" IN ('capture', 'refund', 'dispute', 'payout')),
  CONSTRAINT "ledger_entries_side_check" CHECK (("merchant_id" IS NULL) = ("role" = 'processor'))
);
CREATE INDEX "ledger_entries_merchant_id_mode_created_at_id_idx" ON "ledger_entries"("merchant_id", "mode", "created_at" DESC, "id" DESC);
CREATE INDEX "ledger_entries_merchant_id_mode_currency_idx" ON "ledger_entries"("merchant_id", "mode", "currency") INCLUDE ("amount", "available_at");
CREATE INDEX "ledger_entries_payment_id_idx" ON "ledger_entries"("payment_id") WHERE "payment_id" IS NOT NULL;
CREATE INDEX "ledger_entries_transaction_id_idx" ON "ledger_entries"("transaction_id");

-- Every ledger transaction adds up to zero in each currency, when the database transaction that wrote it commits.
CREATE FUNCTION "ledger_transaction_balances"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  unbalanced RECORD;
BEGIN
  SELECT currency, SUM(amount) AS total INTO unbalanced FROM ledger_entries
    WHERE transaction_id = NEW.transaction_id GROUP BY currency HAVING SUM(amount) <> 0 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger transaction % does not balance in %: %', NEW.transaction_id, unbalanced.currency, unbalanced.total
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER "ledger_entries_balanced" AFTER INSERT ON "ledger_entries"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "ledger_transaction_balances"();

-- Append-only: a movement is undone by a new transaction, never by changing or deleting rows.
CREATE FUNCTION "ledger_entries_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are append-only' USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER "ledger_entries_append_only" BEFORE UPDATE OR DELETE ON "ledger_entries"
  FOR EACH ROW EXECUTE FUNCTION "ledger_entries_append_only"();

-- What moved before the ledger existed, so balances and later movements start from the truth: every payment's
-- capture, the refunds that hold money (not FAILED), the disputes that withdrew it (OPENED, CHALLENGED, ACCEPTED,
-- LOST, EXPIRED) and the payouts that took it (CREATED, INITIATED, PROCESSING, SUCCEEDED). None of them had a fee
-- or splits, so each is the payment's (or payout's) merchant against the processor side. Ids are derived from the
-- source, in the ids' alphabet (hex is within base62).
INSERT INTO "ledger_entries" ("id", "transaction_id", "mode", "currency", "merchant_id", "connector_account_id", "role", "type", "source_id", "payment_id", "amount", "available_at", "created_at")
SELECT 'le_' || substr(md5(m.source_id || ':' || m.type || ':' || side.role), 1, 24), 'ltx_' || substr(md5(m.source_id || ':' || m.type), 1, 24),
       m.mode, m.currency, CASE WHEN side.role = 'merchant' THEN m.merchant_id END, m.connector_account_id, side.role, m.type, m.source_id, m.payment_id,
       CASE WHEN side.role = 'merchant' THEN m.credit ELSE -m.credit END, m.at, m.at
FROM (
  SELECT p.id AS source_id, 'capture' AS type, p.mode, p.currency, p.merchant_id, a.connector_account_id, p.id AS payment_id,
         p.amount_received::bigint AS credit, p.updated_at AS at
  FROM "payment_intents" p JOIN "payment_attempts" a ON a.id = p.active_attempt_id WHERE p.amount_received > 0
  UNION ALL
  SELECT r.id, 'refund', r.mode, r.currency, r.merchant_id, r.connector_account_id, r.payment_id, -r.amount::bigint, r.created_at
  FROM "refunds" r WHERE r.status <> 'FAILED'
  UNION ALL
  SELECT d.id, 'dispute', d.mode, d.currency, d.merchant_id, d.connector_account_id, d.payment_id, -d.amount::bigint, d.created_at
  FROM "disputes" d WHERE d.status IN ('OPENED', 'CHALLENGED', 'ACCEPTED', 'LOST', 'EXPIRED')
  UNION ALL
  SELECT o.id, 'payout', o.mode, o.currency, o.merchant_id, o.connector_account_id, NULL, -o.amount::bigint, o.created_at
  FROM "payouts" o WHERE o.status IN ('CREATED', 'INITIATED', 'PROCESSING', 'SUCCEEDED')
) m
CROSS JOIN (VALUES ('merchant'), ('processor')) AS side(role);
