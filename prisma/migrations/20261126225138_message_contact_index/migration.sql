-- CreateIndex
CREATE INDEX "messages_contact_id_idx" ON "messages"("contact_id");
