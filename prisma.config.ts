import { fileURLToPath } from 'node:url';
import { defineConfig } from 'prisma/config';

// The Prisma CLI refuses to run `generate` until it finds its native schema engine, which it would
// download (impossible offline). Generate never runs that binary, so any existing file passes the
// check; this file is used so that a `prisma migrate`/`db` command that does try to run it fails
// pointing here. Migrations go through the WebAssembly engine instead: npm run db:migrate and
// npm run db:migration -- NAME. A real engine path set by the user wins.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ||= fileURLToPath(import.meta.url);

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/tern' },
});
