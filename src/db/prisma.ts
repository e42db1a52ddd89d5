import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';

export function createPool(databaseUrl: string, poolSize = 10): pg.Pool {
  return new pg.Pool({ connectionString: databaseUrl, max: poolSize });
}

/** Prisma on the process's pool, which it ends on $disconnect. */
export function createPrismaClient(pool: pg.Pool): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
}
