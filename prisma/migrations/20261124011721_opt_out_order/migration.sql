-- CreateIndex
CREATE INDEX "opt_outs_account_id_created_at_phone_idx" ON "opt_outs"("account_id", "created_at", "phone");
