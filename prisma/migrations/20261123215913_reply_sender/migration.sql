-- DropIndex
DROP INDEX "inbound_messages_carrier_carrier_message_id_key";

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "sender" TEXT;

-- Messages already handed to the carrier went out under their account's default sender, where it
-- had one; the carrier-wide default is not known here, so the others keep no sender.
UPDATE "messages" m SET "sender" = s."default_sender"
FROM "account_settings" s
WHERE s."account_id" = m."account_id" AND s."default_sender" IS NOT NULL AND m."claimed_at" IS NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "inbound_messages_carrier_carrier_message_id_account_id_key" ON "inbound_messages"("carrier", "carrier_message_id", "account_id");

-- CreateIndex
CREATE INDEX "messages_to_sender_created_at_idx" ON "messages"("to", "sender", "created_at" DESC);
