-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "MessageStatus" ADD VALUE 'scheduled';
ALTER TYPE "MessageStatus" ADD VALUE 'cancelled';

-- AlterTable
ALTER TABLE "account_settings" ADD COLUMN     "message_validity" INTEGER NOT NULL DEFAULT 86400,
ADD COLUMN     "send_window" JSONB;

-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN     "send_window" JSONB,
ADD COLUMN     "validity" INTEGER;

-- AlterTable
ALTER TABLE "contacts" ADD COLUMN     "timezone" TEXT;

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "cancelled_at" TIMESTAMPTZ(3),
ADD COLUMN     "expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "release_at" TIMESTAMPTZ(3),
ADD COLUMN     "send_at" TIMESTAMPTZ(3);

-- CreateIndex
-- Only the messages still waiting are in it (release_at is cleared as a message leaves `scheduled`).
CREATE INDEX "messages_release_at_idx" ON "messages"("release_at") WHERE "release_at" IS NOT NULL;
