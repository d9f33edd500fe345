-- Partial authorization (where the profile allows it) and the void after capture, with their statuses.

-- AlterEnum
ALTER TYPE "IntentStatus" ADD VALUE 'PARTIALLY_AUTHORIZED';
ALTER TYPE "IntentStatus" ADD VALUE 'CANCELLED_POST_CAPTURE';
ALTER TYPE "AttemptStatus" ADD VALUE 'PARTIALLY_AUTHORIZED';
ALTER TYPE "AttemptStatus" ADD VALUE 'VOID_POST_CHARGE_INITIATED';
ALTER TYPE "AttemptStatus" ADD VALUE 'VOIDED_POST_CHARGE';

-- AlterTable
ALTER TABLE "business_profiles" ADD COLUMN "allow_partial_authorization" BOOLEAN NOT NULL DEFAULT false;
