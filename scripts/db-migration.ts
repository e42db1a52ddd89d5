// Writes prisma/migrations/<timestamp>_NAME/migration.sql with the changes of prisma/schema.prisma
// since the last migration. Usage: npm run db:migration -- NAME
import { createMigration, DEFAULT_DATABASE_URL, MIGRATION_NAME_PATTERN } from '../src/db/migrations.js';

const args = process.argv.slice(2);
const name = args[0];

if (args.length !== 1 || !name) {
  console.error('usage: npm run db:migration -- NAME');
  process.exitCode = 2;
} else if (!MIGRATION_NAME_PATTERN.test(name)) {
  console.error(`invalid migration name "${name}": use lowercase letters, digits and _ only`);
  process.exitCode = 2;
} else {
  try {
    const folder = await createMigration(name, {
      databaseUrl: process.env.DATABASE_URL || DEFAULT_DATABASE_URL,
      log: (message) => console.log(message),
    });
    console.log(folder ?? 'no changes');
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
