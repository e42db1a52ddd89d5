-- AlterTable
ALTER TABLE "carriers" ADD COLUMN     "callback_secret_sealed" TEXT,
ADD COLUMN     "template" TEXT;

-- CreateTable
CREATE TABLE "carrier_callback_events" (
    "carrier" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "carrier_message_id" TEXT NOT NULL,
    "reference" TEXT,
    "event" JSONB NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL,
    "applied_at" TIMESTAMPTZ(3),

    CONSTRAINT "carrier_callback_events_pkey" PRIMARY KEY ("carrier","kind","carrier_message_id")
);

-- CreateIndex
CREATE INDEX "carrier_callback_events_applied_at_received_at_idx" ON "carrier_callback_events"("applied_at", "received_at");
