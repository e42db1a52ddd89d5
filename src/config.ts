import { readFileSync } from 'node:fs';
import { hkdfSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';

const booleanFlag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

/** Every environment variable Tern reads, with its bounds and default (docs/configuration.md lists them). */
export const environmentSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).default('postgresql://postgres@127.0.0.1:5432/tern'),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:_-]{1,40}$/).default('tern'),
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  JWT_SECRET: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  // 0 picks a free port, as PORT does; `off` serves no metrics.
  METRICS_PORT: z.union([z.literal('off'), z.coerce.number().int().min(0).max(65535)]).default(9464),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  // 0 keeps everything. At least 7 otherwise: a webhook replay reaches 7 days back.
  RETENTION_DAYS: z.coerce
    .number()
    .int()
    .max(36_500)
    .refine((days) => days === 0 || days >= 7, 'must be 0 (keep everything) or at least 7')
    .default(30),
  CARRIER: z.enum(['simulator', 'smpp']).default('simulator'),
  // Read by hand (parseSmppUrl): a URL error must not echo the password.
  SMPP_URL: z.string().optional(),
  SMPP_SYSTEM_TYPE: z.string().max(12).default(''),
  SMPP_SOURCE_ADDR: z
    .string()
    .regex(/^(\+?\d{3,15}|[A-Za-z0-9 ]{3,11})$/, 'a number of 3..15 digits or 3..11 letters and digits')
    .optional(),
  SMPP_WINDOW: z.coerce.number().int().min(1).max(1_000).default(10),
  SMPP_CONCAT: z.enum(['udh', 'payload']).default('udh'),
  SMPP_ENQUIRE_LINK_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  SMPP_RESPONSE_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(10_000),
  SMPP_RECONNECT_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
  SMPP_THROTTLE_BACKOFF_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
  SIMULATOR_DELAY_MS: z.coerce.number().int().min(0).max(3_600_000).default(200),
  SIMULATOR_SUBMIT_LATENCY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  SEND_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(32),
  CARRIER_MAX_PER_SECOND: z.coerce.number().int().min(1).optional(),
  RECOVERY_INTERVAL_MS: z.coerce.number().int().min(100).default(5_000),
  RECOVERY_AFTER_MS: z.coerce.number().int().min(100).default(15_000),
  CLAIM_LEASE_MS: z.coerce.number().int().min(100).default(60_000),
  WEBHOOK_ALLOW_INSECURE: booleanFlag.default(false),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: booleanFlag.default(false),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(10).max(10_000).default(10_000),
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(64),
  WEBHOOK_SECRET_KEY: z.string().optional(),
  TWO_FACTOR_SECRET_KEY: z.string().optional(),
  RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(600),
  RATE_LIMIT_WINDOW_S: z.coerce.number().int().min(1).max(86_400).default(60),
  RATE_LIMIT_SEND_MESSAGE_MAX: z.coerce.number().int().min(0).default(300),
  RATE_LIMIT_LOGIN_MAX: z.coerce.number().int().min(0).default(30),
  TRUST_PROXY: booleanFlag.default(false),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  GRAPHIQL: booleanFlag.optional(),
  GRAPHQL_INTROSPECTION: booleanFlag.optional(),
  DEMO_ACCOUNT: booleanFlag.optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  WEB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  IMPORT_DIR: z.string().min(1).optional(),
  IMPORT_MAX_INFLATED_MB: z.coerce.number().int().min(1).max(4_096).default(100),
});

export type Role = 'all' | 'api' | 'worker';

/** The SMPP carrier's settings (CARRIER=smpp); see docs/carriers.md. */
export interface SmppConfig {
  host: string;
  port: number;
  tls: boolean;
  systemId: string;
  password: string;
  systemType: string;
  /** The sender when the account has no default_sender. */
  sourceAddr: string | null;
  window: number;
  concatenation: 'udh' | 'payload';
  enquireLinkMs: number;
  responseTimeoutMs: number;
  reconnectMs: number;
  throttleBackoffMs: number;
}

export interface Config {
  env: 'development' | 'test' | 'production';
  host: string;
  port: number;
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  /** How long a command on the request path's Redis connection may wait for its answer. */
  redisCommandTimeoutMs: number;
  jwtSecret: string;
  logLevel: string;
  logFormat: 'json' | 'pretty';
  /** Where Prometheus scrapes this process (or, with WEB_CONCURRENCY above 1, the supervisor); null serves none. */
  metrics: { host: string; port: number } | null;
  /** Events, delivery logs and carrier working rows older than this many days are deleted; 0 keeps them. */
  retentionDays: number;
  carrier: 'simulator' | 'smpp';
  /** Set when carrier is 'smpp'. */
  smpp: SmppConfig | null;
  simulatorDelayMs: number;
  simulatorSubmitLatencyMs: number;
  sendConcurrency: number;
  carrierMaxPerSecond: number | null;
  recoveryIntervalMs: number;
  recoveryAfterMs: number;
  claimLeaseMs: number;
  databasePoolSize: number;
  rateLimitMax: number;
  rateLimitWindowSeconds: number;
  /** sendMessage calls per account in one window, within the budget; 0 turns the limit off. */
  sendMessageRateLimitMax: number;
  /** login calls per client address in one window, within the budget; 0 turns the limit off. */
  loginRateLimitMax: number;
  trustProxy: boolean;
  webhookAllowInsecure: boolean;
  webhookAllowPrivateNetworks: boolean;
  webhookTimeoutMs: number;
  webhookRetryBaseMs: number;
  webhookConcurrency: number;
  /** AES-256-GCM key that seals the accounts' webhook signing secrets at rest. */
  webhookSecretKey: Buffer;
  /** AES-256-GCM key that seals the accounts' TOTP secrets at rest. */
  twoFactorSecretKey: Buffer;
  graphiql: boolean;
  introspection: boolean;
  demoAccount: boolean;
  shutdownTimeoutMs: number;
  /** API processes `npm start` forks (node:cluster); 1 runs everything in this process. */
  webConcurrency: number;
  /** Where uploads wait for the import worker; the API and the workers must share it. */
  importDir: string;
  /** The most bytes an XLSX's parts may inflate to before the import is refused. */
  importMaxInflatedBytes: number;
  warnings: string[];
}

export class ConfigError extends Error {}

const DEVELOPMENT_JWT_SECRET = 'tern-development-only-secret-do-not-use-in-production';
// Fixed, so that secrets sealed by one development run can be opened by the next.
const DEVELOPMENT_WEBHOOK_SECRET_KEY = Buffer.from('tern-development-webhook-key-32b', 'utf8');

/**
 * Reads and validates the whole configuration once, at start-up. Nothing else reads
 * process.env, so a test can build an isolated instance from a plain object.
 */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const parsed = environmentSchema.safeParse(
    Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== '')),
  );
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const env = parsed.data;
  const production = env.NODE_ENV === 'production';
  const warnings: string[] = [];

  let jwtSecret = env.JWT_SECRET;
  if (production && (!jwtSecret || Buffer.byteLength(jwtSecret) < 32)) {
    throw new ConfigError('invalid configuration: JWT_SECRET is required in production and must be at least 32 bytes');
  }
  if (!jwtSecret) {
    jwtSecret = DEVELOPMENT_JWT_SECRET;
    warnings.push('JWT_SECRET is not set: using a development key; tokens will not survive a change of key');
  }

  let webhookSecretKey = env.WEBHOOK_SECRET_KEY ? parseKey(env.WEBHOOK_SECRET_KEY) : null;
  if (env.WEBHOOK_SECRET_KEY && !webhookSecretKey) {
    throw new ConfigError('invalid configuration: WEBHOOK_SECRET_KEY must be 32 bytes, as 64 hex digits or in base64');
  }
  if (production && !webhookSecretKey) {
    throw new ConfigError('invalid configuration: WEBHOOK_SECRET_KEY is required in production (32 bytes, as 64 hex digits or in base64)');
  }
  if (!webhookSecretKey) {
    webhookSecretKey = DEVELOPMENT_WEBHOOK_SECRET_KEY;
    warnings.push('WEBHOOK_SECRET_KEY is not set: webhook signing secrets are sealed with a development key');
  }

  const twoFactorSecretKey = env.TWO_FACTOR_SECRET_KEY ? parseKey(env.TWO_FACTOR_SECRET_KEY) : derivedKey(webhookSecretKey, 'tern two-factor secrets');
  if (!twoFactorSecretKey) {
    throw new ConfigError('invalid configuration: TWO_FACTOR_SECRET_KEY must be 32 bytes, as 64 hex digits or in base64');
  }

  let smpp: SmppConfig | null = null;
  if (env.CARRIER === 'smpp') {
    if (!env.SMPP_URL) {
      throw new ConfigError('invalid configuration: SMPP_URL is required when CARRIER=smpp (smpp://system_id:password@host:port, smpps:// for TLS)');
    }
    smpp = {
      ...parseSmppUrl(env.SMPP_URL),
      systemType: env.SMPP_SYSTEM_TYPE,
      sourceAddr: env.SMPP_SOURCE_ADDR ?? null,
      window: env.SMPP_WINDOW,
      concatenation: env.SMPP_CONCAT,
      enquireLinkMs: env.SMPP_ENQUIRE_LINK_MS,
      responseTimeoutMs: env.SMPP_RESPONSE_TIMEOUT_MS,
      reconnectMs: env.SMPP_RECONNECT_MS,
      throttleBackoffMs: env.SMPP_THROTTLE_BACKOFF_MS,
    };
  }

  return {
    env: env.NODE_ENV,
    host: env.HOST,
    port: env.PORT,
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    redisPrefix: env.REDIS_PREFIX,
    redisCommandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS,
    jwtSecret,
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    metrics: env.METRICS_PORT === 'off' ? null : { host: env.METRICS_HOST, port: env.METRICS_PORT },
    retentionDays: env.RETENTION_DAYS,
    carrier: env.CARRIER,
    smpp,
    simulatorDelayMs: env.SIMULATOR_DELAY_MS,
    simulatorSubmitLatencyMs: env.SIMULATOR_SUBMIT_LATENCY_MS,
    sendConcurrency: env.SEND_CONCURRENCY,
    carrierMaxPerSecond: env.CARRIER_MAX_PER_SECOND ?? null,
    recoveryIntervalMs: env.RECOVERY_INTERVAL_MS,
    recoveryAfterMs: env.RECOVERY_AFTER_MS,
    claimLeaseMs: env.CLAIM_LEASE_MS,
    databasePoolSize: env.DATABASE_POOL_SIZE,
    rateLimitMax: env.RATE_LIMIT_MAX,
    rateLimitWindowSeconds: env.RATE_LIMIT_WINDOW_S,
    sendMessageRateLimitMax: env.RATE_LIMIT_SEND_MESSAGE_MAX,
    loginRateLimitMax: env.RATE_LIMIT_LOGIN_MAX,
    trustProxy: env.TRUST_PROXY,
    webhookAllowInsecure: env.WEBHOOK_ALLOW_INSECURE,
    webhookAllowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    webhookTimeoutMs: env.WEBHOOK_TIMEOUT_MS,
    webhookRetryBaseMs: env.WEBHOOK_RETRY_BASE_MS,
    webhookConcurrency: env.WEBHOOK_CONCURRENCY,
    webhookSecretKey,
    twoFactorSecretKey,
    graphiql: env.GRAPHIQL ?? !production,
    introspection: env.GRAPHQL_INTROSPECTION ?? !production,
    demoAccount: env.DEMO_ACCOUNT ?? !production,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    webConcurrency: env.WEB_CONCURRENCY,
    importDir: resolve(env.IMPORT_DIR ?? join(tmpdir(), 'tern-imports')),
    importMaxInflatedBytes: env.IMPORT_MAX_INFLATED_MB * 1024 * 1024,
    warnings,
  };
}

/**
 * `smpp://system_id:password@host:port` (`smpps://` for TLS; ports 2775 and 3550 by default).
 * SMPP 3.4 allows a system_id of up to 15 characters and a password of up to 8.
 */
function parseSmppUrl(text: string): Pick<SmppConfig, 'host' | 'port' | 'tls' | 'systemId' | 'password'> {
  const invalid = (why: string) =>
    new ConfigError(`invalid configuration: SMPP_URL ${why} (expected smpp://system_id:password@host:port, smpps:// for TLS)`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('is not a URL');
  }
  if (url.protocol !== 'smpp:' && url.protocol !== 'smpps:') throw invalid(`has the scheme ${url.protocol}`);
  if (!url.hostname) throw invalid('names no host');
  const systemId = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  if (!systemId || systemId.length > 15) throw invalid('needs a system_id of 1..15 characters');
  if (password.length > 8) throw invalid('has a password longer than the 8 characters SMPP 3.4 allows');
  const tls = url.protocol === 'smpps:';
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : tls ? 3550 : 2775, tls, systemId, password };
}

/**
 * The process environment over a `.env` file in the working directory: a variable set in the
 * real environment wins over the file's. No file, no change; an unreadable one is an error.
 */
export function environmentWithDotEnv(
  environment: Record<string, string | undefined> = process.env,
  path = resolve('.env'),
): Record<string, string | undefined> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return environment;
    throw new ConfigError(`cannot read ${path}: ${(error as Error).message}`);
  }
  return { ...parseEnv(text), ...environment };
}

/** A 32-byte key written as 64 hex digits or in base64 (either alphabet); null otherwise. */
function parseKey(text: string): Buffer | null {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : /^[A-Za-z0-9+/_-]{43}=?$/.test(text) ? Buffer.from(text, 'base64') : null;
  return key?.length === 32 ? key : null;
}

/**
 * A key of its own for another purpose, from a configured one (HKDF-SHA-256): a deployment that
 * sets WEBHOOK_SECRET_KEY (required in production) gets a TOTP sealing key without a new
 * required setting, and neither key's ciphertexts open with the other.
 */
function derivedKey(key: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), purpose, 32));
}

/** A URL as it may be printed: without its password. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.searchParams.delete('password');
    return parsed.toString();
  } catch {
    return url;
  }
}
