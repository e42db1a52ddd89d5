import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';

/**
 * The process's connections to DATABASE_URL, which may be PgBouncer in transaction pooling: each
 * transaction, or statement outside one, may run on another server connection. So nothing here
 * relies on a session: statements are never named (a statement prepared on one server connection
 * is missing on the next), locks are taken for a transaction, settings with SET LOCAL, and what
 * needs a session (migrations) connects to DIRECT_DATABASE_URL instead.
 */
export function createPool(databaseUrl: string, poolSize = 10, connectionTimeoutMillis = 0): pg.Pool {
  return new pg.Pool({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis });
}

/** Prisma on the process's pool, which it ends on $disconnect. */
export function createPrismaClient(pool: pg.Pool): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
}
