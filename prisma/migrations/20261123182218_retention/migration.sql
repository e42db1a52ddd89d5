-- AlterTable
ALTER TABLE "smpp_parts" ADD COLUMN     "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- CreateIndex
CREATE INDEX "pending_webhook_deliveries_event_id_idx" ON "pending_webhook_deliveries"("event_id");

-- CreateIndex
CREATE INDEX "smpp_parts_created_at_idx" ON "smpp_parts"("created_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_created_at_idx" ON "webhook_deliveries"("created_at");
