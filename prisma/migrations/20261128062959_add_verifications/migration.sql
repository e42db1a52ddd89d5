-- CreateEnum
CREATE TYPE "VerificationStatus" AS ENUM ('pending', 'approved', 'expired', 'max_attempts_reached');

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "sealed_text" TEXT;

-- CreateTable
CREATE TABLE "verifications" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "country" TEXT,
    "code_hmac" TEXT NOT NULL,
    "status" "VerificationStatus" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "sends" INTEGER NOT NULL DEFAULT 1,
    "last_sent_at" TIMESTAMPTZ(3) NOT NULL,
    "message_id" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "approved_at" TIMESTAMPTZ(3),

    CONSTRAINT "verifications_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "verifications_account_id_to_created_at_idx" ON "verifications"("account_id", "to", "created_at" DESC);

-- CreateIndex
CREATE INDEX "verifications_account_id_created_at_idx" ON "verifications"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "verifications_status_expires_at_idx" ON "verifications"("status", "expires_at");

-- CreateIndex
CREATE INDEX "verifications_message_id_idx" ON "verifications"("message_id");

-- AddForeignKey
ALTER TABLE "verifications" ADD CONSTRAINT "verifications_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
