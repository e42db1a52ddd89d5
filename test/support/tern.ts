import { randomBytes } from 'node:crypto';
import type { GraphQLSchema } from 'graphql';
import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { createTern, type Tern } from '../../src/app.js';
import { loadConfig, type Role } from '../../src/config.js';
import { createDependencies } from '../../src/deps.js';
import { type MetricsServer, serveMetrics } from '../../src/metrics/metrics-server.js';
import { ManualClock } from './clock.js';
import { contractMismatch } from './contract.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { REDIS_URL } from './server-url.js';

export interface HttpResult<Body = any> {
  status: number;
  headers: Headers;
  body: Body;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, instead of JSON-encoding `body`. */
  rawBody?: string | Buffer;
  token?: string;
  headers?: Record<string, string>;
}

export interface TestAccount {
  account: string;
  email: string;
  password: string;
  token: string;
}

export interface TestTern {
  url: string;
  tern: Tern;
  /** The API's GraphQL schema; the harness refuses to read it from a worker-only Tern. */
  readonly schema: GraphQLSchema;
  clock: ManualClock;
  database: TestDatabase;
  redisPrefix: string;
  request<Body = any>(method: string, path: string, options?: RequestOptions): Promise<HttpResult<Body>>;
  graphql(query: string, variables?: Record<string, unknown>, token?: string): Promise<HttpResult>;
  createAccount(email?: string, password?: string): Promise<TestAccount>;
  /** GET /health on the metrics listener (started at the first call): the health in detail. */
  healthDetail(): Promise<HttpResult>;
  /** A fresh token for the account, as of the harness clock. */
  login(account: TestAccount): Promise<TestAccount>;
  stop(): Promise<void>;
}

/**
 * A whole Tern (API and workers) on a database and Redis prefix of its own, listening on a
 * free loopback port and driven over real HTTP.
 */
export async function startTern(
  options: {
    env?: Record<string, string>;
    role?: Role;
    sharing?: TestTern;
    logger?: Logger;
    /** A database of the test's own making instead of a fresh one; dropped on stop. */
    database?: TestDatabase;
  } = {},
): Promise<TestTern> {
  // A second instance on another's database and Redis prefix stands for a second process.
  const database = options.sharing?.database ?? options.database ?? (await createTestDatabase());
  const redisPrefix = options.sharing?.redisPrefix ?? `tern_test_${randomBytes(6).toString('hex')}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: database.url,
    DIRECT_DATABASE_URL: database.directUrl,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET: 'test-secret-that-is-at-least-32-bytes-long',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Tests poll as fast as they like; the rate limit has tests of its own.
    RATE_LIMIT_MAX: '1000000',
    RATE_LIMIT_SEND_MESSAGE_MAX: '0',
    RATE_LIMIT_LOGIN_MAX: '0',
    // Two test files side by side, each with Tern processes, can stall this process's event loop
    // for over a second on a slow machine; a command answered meanwhile must not count as a
    // Redis that hangs (whose tests set their own timeout), or the limits would let calls through.
    REDIS_COMMAND_TIMEOUT_MS: '10000',
    // Sends as fast and as alike as a test likes; the fraud guard has tests of its own.
    FRAUD_FLOOD_IDENTICAL: '0',
    FRAUD_FLOOD_MAX: '0',
    FRAUD_VELOCITY_MAX: '0',
    ...options.env,
  });
  const clock = new ManualClock();
  const tern = await createTern(
    createDependencies(config, { clock, logger: options.logger ?? pino({ level: config.logLevel }) }),
    options.role ?? 'all',
  );
  let url: string;
  try {
    url = (await tern.start()) ?? '';
  } catch (error) {
    // A start-up refused (a test of it) leaves no connection open behind it.
    await tern.stop().catch(() => undefined);
    if (!options.sharing && !options.database) await database.drop();
    throw error;
  }

  const request = async (method: string, path: string, opts: RequestOptions = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | Buffer | undefined = opts.rawBody;
    if (body === undefined && opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${url}${path}`, { method, headers, body: body as BodyInit | undefined });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: the raw text is what the test gets to look at.
    }
    const broken = contractMismatch(
      config.webhookAllowInsecure,
      method,
      path,
      opts.rawBody === undefined ? opts.body : undefined,
      response.status,
      parsed,
      response.headers,
    );
    if (broken) throw new Error(`The /v1 contract is broken: ${broken}`);
    return { status: response.status, headers: response.headers, body: parsed as any };
  };

  let metrics: MetricsServer | null = null;
  const harness: TestTern = {
    url,
    tern,
    get schema() {
      if (!tern.schema) throw new Error('a worker-only Tern serves no GraphQL schema');
      return tern.schema;
    },
    clock,
    database,
    redisPrefix,
    request,
    graphql: (query, variables, token) => request('POST', '/graphql', { body: { query, variables }, token }),
    async createAccount(
      email = `user-${randomBytes(4).toString('hex')}@example.com`,
      password = 'correct horse battery',
    ) {
      const { account } = await tern.services.accounts.create({ email, password });
      return harness.login({ account, email, password, token: '' });
    },
    async healthDetail() {
      metrics ??= await serveMetrics({
        host: '127.0.0.1',
        port: 0,
        contentType: tern.deps.metrics.registry.contentType,
        render: () => tern.deps.metrics.registry.metrics(),
        health: () => tern.healthDetail(),
      });
      const response = await fetch(`${metrics.address}/health`);
      return { status: response.status, headers: response.headers, body: await response.json() };
    },
    async login(account) {
      const response = await request('POST', '/v1/auth/login', {
        body: { email: account.email, password: account.password },
      });
      return { ...account, token: response.body.token };
    },
    async stop() {
      await metrics?.close();
      await tern.stop();
      if (options.sharing) return;
      // The drop checks the ledger first (database.ts); the keys go whatever it finds.
      try {
        await database.drop();
      } finally {
        await deleteRedisKeys(redisPrefix);
      }
    },
  };
  return harness;
}

export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * Stops the instance's once-a-second reads of the operator's settings (carriers and routes, the
 * countries' sender rules) until the returned function starts them again: a test that counts the
 * statements or rows of its requests on the instance's pool must not count those.
 */
export function pauseSettingsPolls(instance: TestTern): () => Promise<void> {
  const { carrierDirectory, countrySenderRules } = instance.tern.services;
  carrierDirectory.stop();
  countrySenderRules.stop();
  return async () => {
    carrierDirectory.start();
    await countrySenderRules.start();
  };
}
