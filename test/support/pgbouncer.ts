import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { withDatabase } from '../../src/db/schema-engine.js';
import { SERVER_URL } from './server-url.js';

// PgBouncer in transaction pooling in front of the tests' PostgreSQL, as production runs it.

export interface PgBouncer {
  port: number;
  /** The URL of `database` through the bouncer. */
  url(database: string): string;
  /** What it printed, for failure messages. */
  output(): string;
  /** Transactions it has carried to PostgreSQL (and statements outside one), from its admin console. */
  transactions(): Promise<number>;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 15_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** PgBouncer refuses to run as root; as root it is started as the `postgres` user. */
function unprivilegedUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Starts Debian's pgbouncer on a free loopback port, every database of the tests' server behind
 * it, in transaction pooling: each transaction (or statement outside one) may get another server
 * connection. `poolSize` server connections per database at most.
 */
export async function startPgBouncer(options: { poolSize?: number } = {}): Promise<PgBouncer> {
  const server = new URL(SERVER_URL);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'tern-pgbouncer-'));
  const account = unprivilegedUser();
  await writeFile(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  await writeFile(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 20}`,
      'max_client_conn = 2000',
      'server_reset_query =',
      `admin_users = ${user}`,
      '',
    ].join('\n'),
  );
  if (account) {
    for (const name of ['', 'userlist.txt', 'pgbouncer.ini'])
      await chown(join(dir, name), account.uid, account.gid);
  }
  const child: ChildProcess = spawn('pgbouncer', [join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(account ?? {}),
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.once('error', (error) => (output += `\n[spawn error] ${error.message}\n`));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = (database: string) => {
    const through = new URL(withDatabase(SERVER_URL, database));
    through.hostname = '127.0.0.1';
    through.port = String(port);
    return through.toString();
  };
  const stop = async () => {
    child.kill('SIGTERM');
    await closed;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilItAnswers(url('postgres'), () => child.exitCode !== null);
  } catch (error) {
    await stop();
    throw new Error(
      `pgbouncer did not start (is Debian's pgbouncer installed?): ${String(error)}\n${output}`,
    );
  }
  const transactions = async () => {
    const admin = new pg.Client({ connectionString: url('pgbouncer') });
    await admin.connect();
    try {
      // The admin console speaks the simple protocol only.
      const { rows } = await admin.query<{ total_xact_count: string }>('SHOW STATS');
      return rows.reduce((sum, row) => sum + Number(row.total_xact_count ?? 0), 0);
    } finally {
      await admin.end();
    }
  };
  return { port, url, output: () => output, transactions, stop };
}

async function waitUntilItAnswers(url: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (exited() || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
