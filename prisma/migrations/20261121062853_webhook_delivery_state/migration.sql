-- AlterTable
ALTER TABLE "events" ADD COLUMN     "body" TEXT;

-- CreateTable
CREATE TABLE "pending_webhook_deliveries" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "webhook_id" TEXT,
    "campaign_id" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pending_webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "pending_webhook_deliveries_next_attempt_at_idx" ON "pending_webhook_deliveries"("next_attempt_at");

-- AddForeignKey
ALTER TABLE "pending_webhook_deliveries" ADD CONSTRAINT "pending_webhook_deliveries_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pending_webhook_deliveries" ADD CONSTRAINT "pending_webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pending_webhook_deliveries" ADD CONSTRAINT "pending_webhook_deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pending_webhook_deliveries" ADD CONSTRAINT "pending_webhook_deliveries_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE;
