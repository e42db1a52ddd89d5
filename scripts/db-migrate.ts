// Applies the pending migrations of prisma/migrations to DIRECT_DATABASE_URL, or DATABASE_URL
// without it (creating the database when it is missing). Usage: npm run db:migrate
import { DEFAULT_DATABASE_URL, migrateDatabase } from '../src/db/migrations.js';

const databaseUrl = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_DATABASE_URL;

try {
  const applied = await migrateDatabase(databaseUrl, { log: (message) => console.log(message) });
  if (applied.length === 0) console.log('no pending migrations');
} catch (error) {
  // One line, no stack: the messages name the server (without password) or the failing migration.
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
