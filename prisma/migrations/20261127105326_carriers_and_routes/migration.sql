-- CreateTable
CREATE TABLE "carriers" (
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "password_sealed" TEXT,
    "max_per_second" INTEGER,
    "binds" INTEGER NOT NULL DEFAULT 1,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "carriers_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "routes" (
    "id" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "account_id" TEXT,
    "scope" TEXT NOT NULL,
    "carriers" TEXT[],
    "split" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "routes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "routes_scope_prefix_key" ON "routes"("scope", "prefix");
