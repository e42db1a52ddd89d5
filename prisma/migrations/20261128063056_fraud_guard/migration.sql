-- CreateTable
CREATE TABLE "fraud_guard_rules" (
    "account_id" TEXT NOT NULL,
    "flood_identical" INTEGER,
    "flood_any" INTEGER,
    "velocity" INTEGER,
    "country_caps" JSONB NOT NULL DEFAULT '{}',
    "cool_off_seconds" INTEGER,
    "mode" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "fraud_guard_rules_pkey" PRIMARY KEY ("account_id")
);

-- CreateTable
CREATE TABLE "fraud_guard_counts" (
    "account_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "rule" TEXT NOT NULL,
    "country" TEXT NOT NULL,
    "decision" TEXT NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "fraud_guard_counts_pkey" PRIMARY KEY ("account_id","day","rule","country","decision")
);

-- AddForeignKey
ALTER TABLE "fraud_guard_rules" ADD CONSTRAINT "fraud_guard_rules_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "fraud_guard_counts" ADD CONSTRAINT "fraud_guard_counts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
