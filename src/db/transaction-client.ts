import type pg from 'pg';

/**
 * Runs `work` on a connection of the pool's own; `work` begins and ends its transaction, so that
 * it may send BEGIN and COMMIT in one round trip with its own statements. Should `work` throw, the
 * transaction is rolled back, and a connection whose ROLLBACK fails too is destroyed rather than
 * given back to the pool with its transaction still open.
 */
export async function withTransactionClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    return await work(client);
  } catch (error) {
    await client.query('ROLLBACK').catch((failure: Error) => {
      broken = failure;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
