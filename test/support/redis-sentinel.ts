import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { type ChildHandle, freePort, pollUntil, spawnChild } from './tern-processes.js';

// A Redis master, its replica and a sentinel watching them, on loopback ports of the test's own:
// what REDIS_SENTINELS points Tern at, with a failover the test can force.

const NAME = 'tern-test';
const PASSWORD = 'sentinel-test-password';
const READY_TIMEOUT_MS = 20_000;

export interface SentinelGroup {
  /** REDIS_URL (its host unused: a port nothing listens on), REDIS_SENTINELS, REDIS_SENTINEL_NAME, REDIS_SENTINEL_PASSWORD. */
  env: Record<string, string>;
  /** The master's port, as the sentinel names it now. */
  masterPort(): Promise<number>;
  /**
   * Forces a failover (SENTINEL FAILOVER) and resolves once the replica is the master the
   * sentinel names and the old master has become its replica.
   */
  failover(): Promise<{ from: number; to: number }>;
  /** Resolves once the replica has every write the master took so far. */
  replicated(): Promise<void>;
  /** A connection to the current master, for the test to inspect it; the test disconnects it. */
  master(): Promise<Redis>;
  stop(): Promise<void>;
}

/** A redis-server (or, with `redis-sentinel`, a sentinel) on a config file of its own in `dir`. */
async function startFromConfig(
  command: 'redis-server' | 'redis-sentinel',
  name: string,
  dir: string,
  lines: string[],
  ready: RegExp,
): Promise<ChildHandle> {
  const file = join(dir, `${name}.conf`);
  await writeFile(file, `${lines.join('\n')}\n`);
  const handle = spawnChild(name, command, [file], { PATH: process.env.PATH ?? '' });
  await handle.waitForOutput(ready, READY_TIMEOUT_MS);
  return handle;
}

function serverConfig(port: number, dir: string): string[] {
  return [
    `port ${port}`,
    'bind 127.0.0.1',
    'save ""',
    'appendonly no',
    `dir ${dir}`,
    // A replica takes its first copy at once instead of after Redis's 5 s wait for others.
    'repl-diskless-sync-delay 0',
  ];
}

async function command<T>(port: number, run: (redis: Redis) => Promise<T>, password?: string): Promise<T> {
  const redis = new Redis({
    port,
    host: '127.0.0.1',
    password,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    return await run(redis);
  } finally {
    redis.disconnect();
  }
}

export async function startSentinelGroup(): Promise<SentinelGroup> {
  const [first, second, sentinelPort, unused] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'tern-sentinel-'));
  const handles: ChildHandle[] = [];
  const accepting = /Ready to accept connections/;
  handles.push(
    await startFromConfig(
      'redis-server',
      'redis-a',
      dir,
      [...serverConfig(first, dir), 'dbfilename a.rdb'],
      accepting,
    ),
  );
  handles.push(
    await startFromConfig(
      'redis-server',
      'redis-b',
      dir,
      [...serverConfig(second, dir), 'dbfilename b.rdb', `replicaof 127.0.0.1 ${first}`],
      accepting,
    ),
  );
  handles.push(
    await startFromConfig(
      'redis-sentinel',
      'sentinel',
      dir,
      [
        `port ${sentinelPort}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${NAME} 127.0.0.1 ${first} 1`,
        `sentinel down-after-milliseconds ${NAME} 2000`,
        `sentinel failover-timeout ${NAME} 10000`,
        `requirepass ${PASSWORD}`,
      ],
      /\+monitor master/,
    ),
  );
  const sentinel = <T>(run: (redis: Redis) => Promise<T>) => command(sentinelPort, run, PASSWORD);
  const masterPort = async () => {
    const [, port] = (await sentinel((redis) => redis.call('SENTINEL', 'get-master-addr-by-name', NAME))) as [
      string,
      string,
    ];
    return Number(port);
  };
  const role = (port: number) => command(port, async (redis) => (await redis.role())[0] as string);
  const replicaLinked = async (port: number) =>
    command(port, async (redis) => /master_link_status:up/.test(await redis.info('replication')));

  await pollUntil(
    'the replica to be in sync and the sentinel to know it',
    async () => {
      try {
        if (!(await replicaLinked(second))) return undefined;
        const replicas = (await sentinel((redis) => redis.call('SENTINEL', 'replicas', NAME))) as string[][];
        return replicas.some((fields) => fields.includes(String(second))) ? true : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: READY_TIMEOUT_MS },
  );

  const group: SentinelGroup = {
    env: {
      REDIS_URL: `redis://127.0.0.1:${unused}`,
      REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`,
      REDIS_SENTINEL_NAME: NAME,
      REDIS_SENTINEL_PASSWORD: PASSWORD,
    },
    masterPort,
    async failover() {
      const from = await masterPort();
      const to = from === first ? second : first;
      await pollUntil(
        'the sentinel to accept the failover',
        async () => {
          try {
            await sentinel((redis) => redis.call('SENTINEL', 'failover', NAME));
            return true;
          } catch {
            // NOGOODSLAVE until the sentinel has seen the replica in sync.
            return undefined;
          }
        },
        { timeoutMs: READY_TIMEOUT_MS, intervalMs: 250 },
      );
      await pollUntil(
        'the failover to complete',
        async () => {
          try {
            if ((await masterPort()) !== to || (await role(to)) !== 'master') return undefined;
            return (await role(from)) === 'slave' && (await replicaLinked(from)) ? true : undefined;
          } catch {
            return undefined;
          }
        },
        { timeoutMs: READY_TIMEOUT_MS, intervalMs: 100 },
      );
      return { from, to };
    },
    async replicated() {
      await command(await masterPort(), async (redis) => {
        await redis.set('tern-test:replication-mark', Date.now());
        const acknowledged = await redis.wait(1, 5_000);
        if (acknowledged < 1) throw new Error('the replica did not acknowledge the master within 5 s');
      });
    },
    async master() {
      const redis = new Redis({ port: await masterPort(), host: '127.0.0.1' });
      redis.on('error', () => undefined);
      return redis;
    },
    async stop() {
      await Promise.all(handles.map((handle) => handle.stop('SIGKILL').catch(() => undefined)));
      await rm(dir, { recursive: true, force: true });
    },
  };
  return group;
}
