-- CreateTable
CREATE TABLE "account_senders" (
    "account_id" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "countries" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "pool" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "account_senders_pkey" PRIMARY KEY ("account_id","sender")
);

-- AddForeignKey
ALTER TABLE "account_senders" ADD CONSTRAINT "account_senders_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
