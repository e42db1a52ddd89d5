import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, countryCodesOf, type Environment, environmentSchema } from './config/environment.js';
import { type FraudGuardDefaults, parseCountryCaps } from './config/fraud-guard.js';
import { secretsFrom } from './config/secrets.js';
import { parseSmppUrl } from './config/smpp-url.js';
import { redactUrl } from './lib/unreachable.js';

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

/** What SMPP_* settings give every SMPP carrier, less its address and credentials. */
export type SmppDefaults = Omit<SmppConfig, 'host' | 'port' | 'tls' | 'systemId' | 'password'>;

/** Sentinels that know where the master of `name` is (REDIS_SENTINELS, REDIS_SENTINEL_NAME). */
export interface RedisSentinels {
  sentinels: { host: string; port: number }[];
  name: string;
  /** The sentinels' own password (REDIS_SENTINEL_PASSWORD), when they ask for one. */
  password: string | null;
}

/**
 * Where Redis is: REDIS_URL, or the master Sentinel names, reached with REDIS_URL's user,
 * password, database number and TLS (its host and port are not used then).
 */
export interface RedisTarget {
  url: string;
  sentinel: RedisSentinels | null;
}

export interface Config {
  env: 'development' | 'test' | 'production';
  host: string;
  port: number;
  databaseUrl: string;
  /**
   * The database without a pooler in between, for what holds a session (migrations and their
   * lock); DATABASE_URL when DIRECT_DATABASE_URL is not set.
   */
  directDatabaseUrl: string;
  redis: RedisTarget;
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
  /** The SMPP settings every SMPP carrier starts from; its URL's options override them. */
  smppDefaults: SmppDefaults;
  simulatorDelayMs: number;
  simulatorSubmitLatencyMs: number;
  sendConcurrency: number;
  carrierMaxPerSecond: number | null;
  recoveryIntervalMs: number;
  recoveryAfterMs: number;
  claimLeaseMs: number;
  /** PUBLIC_URL without its trailing slash: where HTTP carriers' providers call back; null when not set. */
  publicUrl: string | null;
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
  /** GraphQL subscriptions one account may have open at once, across every process. */
  subscriptionsPerAccount: number;
  /** What bounds one account's statistics reads (src/modules/stats/stats-reads.ts). */
  statsReads: { concurrency: number; budget: number; statementTimeoutMs: number };
  /** PostgreSQL connections per process for statistics reads, beside DATABASE_POOL_SIZE. */
  statsPoolSize: number;
  /** AES-256-GCM key that seals the accounts' webhook signing secrets at rest. */
  webhookSecretKey: Buffer;
  /** AES-256-GCM key that seals the carriers' passwords at rest. */
  carrierSecretKey: Buffer;
  /** HMAC key of verification codes, derived from WEBHOOK_SECRET_KEY. */
  verificationCodeKey: Buffer;
  /** AES-256-GCM key of the real text of a message whose stored text is masked, derived from WEBHOOK_SECRET_KEY. */
  messageTextKey: Buffer;
  /** SMPP_URL as given, for the `default` carrier made when none is configured. */
  smppUrl: string | null;
  /** AES-256-GCM key that seals the accounts' TOTP secrets at rest. */
  twoFactorSecretKey: Buffer;
  graphiql: boolean;
  /** Serve the dashboard page at /dashboard. */
  dashboard: boolean;
  introspection: boolean;
  demoAccount: boolean;
  shutdownTimeoutMs: number;
  /** API processes `npm start` forks (node:cluster); 1 runs everything in this process. */
  webConcurrency: number;
  /** Where uploads wait for the import worker; the API and the workers must share it. */
  importDir: string;
  /** The most bytes an XLSX's parts may inflate to before the import is refused. */
  importMaxInflatedBytes: number;
  /** The countries a new account may send to (ISO 3166 alpha-2); empty for every country. */
  defaultAllowedCountries: string[];
  /** The fraud guard's rules for an account that sets none of its own (docs/security.md). */
  fraudGuard: FraudGuardDefaults;
  warnings: string[];
}

/**
 * Reads and validates the whole configuration once, at start-up. Nothing else reads
 * process.env, so a test can build an isolated instance from a plain object. `terminal` says
 * whether standard output is a terminal (a person reading): logs are then pretty in development.
 */
export function loadConfig(
  source: Record<string, string | undefined> = process.env,
  { terminal = process.stdout.isTTY === true }: { terminal?: boolean } = {},
): Config {
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
  return {
    env: env.NODE_ENV,
    ...connectionSettings(env),
    ...secretsFrom(env, warnings),
    ...carrierSettings(env),
    ...limitSettings(env),
    ...webhookSettings(env),
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT ?? (env.NODE_ENV === 'development' && terminal ? 'pretty' : 'json'),
    metrics: env.METRICS_PORT === 'off' ? null : { host: env.METRICS_HOST, port: env.METRICS_PORT },
    retentionDays: env.RETENTION_DAYS,
    recoveryIntervalMs: env.RECOVERY_INTERVAL_MS,
    recoveryAfterMs: env.RECOVERY_AFTER_MS,
    claimLeaseMs: env.CLAIM_LEASE_MS,
    publicUrl: env.PUBLIC_URL ?? null,
    graphiql: env.GRAPHIQL ?? !production,
    dashboard: env.DASHBOARD,
    introspection: env.GRAPHQL_INTROSPECTION ?? !production,
    demoAccount: env.DEMO_ACCOUNT ?? !production,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    webConcurrency: env.WEB_CONCURRENCY,
    importDir: resolve(env.IMPORT_DIR ?? join(tmpdir(), 'tern-imports')),
    importMaxInflatedBytes: env.IMPORT_MAX_INFLATED_MB * 1024 * 1024,
    defaultAllowedCountries: countryCodesOf(env.DEFAULT_ALLOWED_COUNTRIES),
    fraudGuard: fraudGuardSettings(env),
    warnings,
  };
}

function connectionSettings(env: Environment) {
  return {
    host: env.HOST,
    port: env.PORT,
    trustProxy: env.TRUST_PROXY,
    databaseUrl: env.DATABASE_URL,
    directDatabaseUrl: env.DIRECT_DATABASE_URL ?? env.DATABASE_URL,
    databasePoolSize: env.DATABASE_POOL_SIZE,
    redis: { url: env.REDIS_URL, sentinel: redisSentinels(env) },
    redisPrefix: env.REDIS_PREFIX,
    redisCommandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS,
  };
}

function carrierSettings(env: Environment) {
  const smppDefaults = smppDefaultsOf(env);
  return {
    carrier: env.CARRIER,
    smpp: smppSettings(env, smppDefaults),
    smppDefaults,
    smppUrl: env.CARRIER === 'smpp' ? (env.SMPP_URL ?? null) : null,
    simulatorDelayMs: env.SIMULATOR_DELAY_MS,
    simulatorSubmitLatencyMs: env.SIMULATOR_SUBMIT_LATENCY_MS,
    sendConcurrency: env.SEND_CONCURRENCY,
    carrierMaxPerSecond: env.CARRIER_MAX_PER_SECOND ?? null,
  };
}

function smppDefaultsOf(env: Environment): SmppDefaults {
  return {
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

function smppSettings(env: Environment, defaults: SmppDefaults): SmppConfig | null {
  if (env.CARRIER !== 'smpp') return null;
  if (!env.SMPP_URL) {
    throw new ConfigError(
      'invalid configuration: SMPP_URL is required when CARRIER=smpp (smpp://system_id:password@host:port, smpps:// for TLS)',
    );
  }
  return { ...parseSmppUrl(env.SMPP_URL), ...defaults };
}

function limitSettings(env: Environment) {
  return {
    rateLimitMax: env.RATE_LIMIT_MAX,
    rateLimitWindowSeconds: env.RATE_LIMIT_WINDOW_S,
    sendMessageRateLimitMax: env.RATE_LIMIT_SEND_MESSAGE_MAX,
    loginRateLimitMax: env.RATE_LIMIT_LOGIN_MAX,
    subscriptionsPerAccount: env.SUBSCRIPTIONS_PER_ACCOUNT,
    statsReads: {
      concurrency: env.STATS_CONCURRENCY_PER_ACCOUNT,
      budget: env.STATS_BUDGET,
      statementTimeoutMs: env.STATS_STATEMENT_TIMEOUT_MS,
    },
    statsPoolSize: env.STATS_POOL_SIZE,
  };
}

function fraudGuardSettings(env: Environment): FraudGuardDefaults {
  return {
    floodIdentical: env.FRAUD_FLOOD_IDENTICAL,
    floodAny: env.FRAUD_FLOOD_MAX,
    velocity: env.FRAUD_VELOCITY_MAX,
    countryCaps: parseCountryCaps(env.FRAUD_COUNTRY_CAPS),
    coolOffSeconds: env.FRAUD_COOL_OFF_S,
    mode: env.FRAUD_MODE,
    whenRedisDown: env.FRAUD_WHEN_REDIS_DOWN,
  };
}

function webhookSettings(env: Environment) {
  return {
    webhookAllowInsecure: env.WEBHOOK_ALLOW_INSECURE,
    webhookAllowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    webhookTimeoutMs: env.WEBHOOK_TIMEOUT_MS,
    webhookRetryBaseMs: env.WEBHOOK_RETRY_BASE_MS,
    webhookConcurrency: env.WEBHOOK_CONCURRENCY,
  };
}

function redisSentinels(env: Environment): RedisSentinels | null {
  if (!env.REDIS_SENTINELS) {
    if (env.REDIS_SENTINEL_NAME || env.REDIS_SENTINEL_PASSWORD)
      throw new ConfigError(
        'invalid configuration: REDIS_SENTINEL_NAME and REDIS_SENTINEL_PASSWORD need REDIS_SENTINELS',
      );
    return null;
  }
  if (!env.REDIS_SENTINEL_NAME)
    throw new ConfigError(
      'invalid configuration: REDIS_SENTINEL_NAME is required with REDIS_SENTINELS (the name the sentinels monitor the master by)',
    );
  return {
    sentinels: env.REDIS_SENTINELS,
    name: env.REDIS_SENTINEL_NAME,
    password: env.REDIS_SENTINEL_PASSWORD ?? null,
  };
}

/** Redis as it may be printed: without passwords. */
export function describeRedis(target: RedisTarget): string {
  if (!target.sentinel) return redactUrl(target.url);
  const sentinels = target.sentinel.sentinels.map(({ host, port }) => `${host}:${port}`).join(',');
  return `the master "${target.sentinel.name}" of the sentinels ${sentinels}`;
}
