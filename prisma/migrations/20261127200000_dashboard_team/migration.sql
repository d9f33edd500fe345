-- Dashboard users, their invitations and sessions, and the audit log of what they do (docs/dashboard.md).
-- Secrets are stored hashed: passwords with bcrypt, invitation and session tokens with SHA-256.
CREATE TABLE "dashboard_users" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "merchant_id" TEXT NOT NULL REFERENCES "merchant_accounts" ("id") ON DELETE RESTRICT,
    -- Lowercase (a CHECK), so one address is one user whatever its spelling.
    "email" TEXT NOT NULL UNIQUE CHECK ("email" = lower("email")),
    "password_hash" TEXT NOT NULL,
    "role" TEXT NOT NULL CHECK ("role" IN ('owner', 'admin', 'developer', 'viewer')),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- Set when an owner removes the user: the row stays, so the audit log still names who did what.
    "removed_at" TIMESTAMPTZ(3)
);
CREATE INDEX "dashboard_users_merchant_id_idx" ON "dashboard_users" ("merchant_id");

CREATE TABLE "dashboard_invitations" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "merchant_id" TEXT NOT NULL REFERENCES "merchant_accounts" ("id") ON DELETE RESTRICT,
    "email" TEXT NOT NULL CHECK ("email" = lower("email")),
    "role" TEXT NOT NULL CHECK ("role" IN ('owner', 'admin', 'developer', 'viewer')),
    "token_hash" TEXT NOT NULL UNIQUE,
    -- The user who invited, null when a secret API key did.
    "invited_by" TEXT REFERENCES "dashboard_users" ("id") ON DELETE RESTRICT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "accepted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "dashboard_invitations_merchant_id_idx" ON "dashboard_invitations" ("merchant_id", "created_at" DESC);

CREATE TABLE "dashboard_sessions" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "user_id" TEXT NOT NULL REFERENCES "dashboard_users" ("id") ON DELETE RESTRICT,
    "token_hash" TEXT NOT NULL UNIQUE,
    "mode" "Mode" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- Absolute: a session ends then however busy it is.
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3)
);
CREATE INDEX "dashboard_sessions_user_id_idx" ON "dashboard_sessions" ("user_id");

CREATE TABLE "audit_log" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "merchant_id" TEXT NOT NULL REFERENCES "merchant_accounts" ("id") ON DELETE RESTRICT,
    -- Null for what a secret API key did (a failed login of an unknown address has no merchant: it is only logged).
    "user_id" TEXT REFERENCES "dashboard_users" ("id") ON DELETE RESTRICT,
    "user_email" TEXT,
    "action" TEXT NOT NULL,
    "subject_id" TEXT,
    -- ok, or the error code the action was refused with.
    "outcome" TEXT NOT NULL,
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "audit_log_merchant_id_idx" ON "audit_log" ("merchant_id", "created_at" DESC, "id" DESC);
