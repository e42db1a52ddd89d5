import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { isKnownCountry } from '../lib/phone.js';
import { MAX_COOL_OFF_SECONDS, MAX_GUARD_LIMIT, parseCountryCaps } from './fraud-guard.js';

export class ConfigError extends Error {}

/**
 * A whole number written in decimal digits and nothing else. Read with `Number()`, as zod's
 * coercion does, a blank value would be 0 (turning a limit off) and `0x10` or `1e1` would pass.
 */
function decimal(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  return z
    .string()
    .regex(/^[0-9]+$/, 'expected a whole number in decimal digits')
    .transform(Number)
    .pipe(z.number().min(min).max(max));
}

/** Sentinels REDIS_SENTINELS may list: a quorum needs three or five; anything far beyond is a mistake. */
const MAX_SENTINELS = 16;

/** The longest a Node.js timer waits; a longer one fires at once. */
const LONGEST_TIMER_MS = 2_147_483_647;

/** ISO 3166 alpha-2 codes separated by commas (GB,IE), as a list; an empty value is an empty list. */
export function countryCodesOf(value: string): string[] {
  return value
    .split(',')
    .map((code) => code.trim().toUpperCase())
    .filter(Boolean);
}

const countryList = z.string().refine((value) => countryCodesOf(value).every(isKnownCountry), {
  error: 'expected ISO 3166 alpha-2 codes separated by commas, e.g. GB,IE',
});

const booleanFlag = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

/** Every environment variable Tern reads, with its bounds and default (docs/configuration.md lists them). */
export const environmentSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: decimal(0, 65535).default(3000),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).default('postgresql://postgres@127.0.0.1:5432/tern'),
  // The database itself when DATABASE_URL goes through a pooler: migrations hold a session.
  DIRECT_DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).default('redis://127.0.0.1:6379'),
  // host:port,host:port: Redis's master is found through these sentinels (REDIS_URL's host unused).
  REDIS_SENTINELS: z
    .string()
    .transform((list, context) => {
      const sentinels = list
        .split(',')
        .map((entry) => /^([A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:]{2,39}\]):([0-9]{1,5})$/.exec(entry.trim()));
      if (
        sentinels.length > MAX_SENTINELS ||
        sentinels.some((match) => !match || Number(match[2]) < 1 || Number(match[2]) > 65535)
      ) {
        context.addIssue({
          code: 'custom',
          message: `expected host:port,host:port (up to ${MAX_SENTINELS} sentinels, ports 1..65535)`,
        });
        return z.NEVER;
      }
      return sentinels.map((match) => ({
        host: match![1]!.replace(/^\[|\]$/g, ''),
        port: Number(match![2]),
      }));
    })
    .optional(),
  REDIS_SENTINEL_NAME: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'letters, digits, ".", "_" and "-", up to 100')
    .optional(),
  REDIS_SENTINEL_PASSWORD: z.string().max(512).optional(),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,40}$/)
    .default('tern'),
  REDIS_COMMAND_TIMEOUT_MS: decimal(10, 60_000).default(1_000),
  JWT_SECRET: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Unset: `pretty` in development when standard output is a terminal, `json` otherwise.
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  // 0 picks a free port, as PORT does; `off` serves no metrics.
  METRICS_PORT: z
    .union([z.literal('off'), decimal(0, 65535)], {
      error: 'expected `off` or a port, 0..65535 in decimal digits',
    })
    .default(9464),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  // 0 keeps everything. At least 7 otherwise: a webhook replay reaches 7 days back.
  RETENTION_DAYS: decimal(0, 36_500)
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
  SMPP_WINDOW: decimal(1, 1_000).default(10),
  SMPP_CONCAT: z.enum(['udh', 'payload']).default('udh'),
  SMPP_ENQUIRE_LINK_MS: decimal(100, 3_600_000).default(30_000),
  SMPP_RESPONSE_TIMEOUT_MS: decimal(50, 600_000).default(10_000),
  SMPP_RECONNECT_MS: decimal(10, 600_000).default(1_000),
  SMPP_THROTTLE_BACKOFF_MS: decimal(10, 600_000).default(1_000),
  SIMULATOR_DELAY_MS: decimal(0, 3_600_000).default(200),
  SIMULATOR_SUBMIT_LATENCY_MS: decimal(0, 60_000).default(0),
  SEND_CONCURRENCY: decimal(1, 1_000).default(32),
  CARRIER_MAX_PER_SECOND: decimal(1).optional(),
  RECOVERY_INTERVAL_MS: decimal(100, LONGEST_TIMER_MS).default(5_000),
  RECOVERY_AFTER_MS: decimal(100, LONGEST_TIMER_MS).default(15_000),
  CLAIM_LEASE_MS: decimal(100, LONGEST_TIMER_MS).default(60_000),
  // The address HTTP carriers' providers reach Tern at (their reports and replies): scheme, host,
  // an optional port and path prefix; no query, fragment or credentials.
  PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .max(300)
    // Zod runs refinements after a failed check too: an address that does not parse is left to
    // the check's own message.
    .refine((text) => {
      const url = URL.parse(text);
      return !url || (!url.search && !url.hash && !url.username && !url.password);
    }, 'expected http(s)://host[:port][/path], without query, fragment or credentials')
    // As a URL prints it (host in lower case…): the form callback URLs are given, and signed, in.
    .transform((text) => new URL(text).href.replace(/\/+$/, ''))
    .optional(),
  WEBHOOK_ALLOW_INSECURE: booleanFlag.default(false),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: booleanFlag.default(false),
  WEBHOOK_TIMEOUT_MS: decimal(10, 10_000).default(10_000),
  WEBHOOK_RETRY_BASE_MS: decimal(10, 3_600_000).default(30_000),
  WEBHOOK_CONCURRENCY: decimal(1, 1_000).default(64),
  WEBHOOK_SECRET_KEY: z.string().optional(),
  TWO_FACTOR_SECRET_KEY: z.string().optional(),
  RATE_LIMIT_MAX: decimal(1).default(600),
  RATE_LIMIT_WINDOW_S: decimal(1, 86_400).default(60),
  RATE_LIMIT_SEND_MESSAGE_MAX: decimal(0).default(300),
  RATE_LIMIT_LOGIN_MAX: decimal(0).default(30),
  SUBSCRIPTIONS_PER_ACCOUNT: decimal(1, 10_000).default(20),
  STATS_CONCURRENCY_PER_ACCOUNT: decimal(1, 100).default(4),
  STATS_BUDGET: decimal(400, 100_000_000).default(6_000),
  STATS_STATEMENT_TIMEOUT_MS: decimal(10, 600_000).default(5_000),
  STATS_POOL_SIZE: decimal(1, 100).default(2),
  TRUST_PROXY: booleanFlag.default(false),
  DATABASE_POOL_SIZE: decimal(1, 500).default(20),
  GRAPHIQL: booleanFlag.optional(),
  DASHBOARD: booleanFlag.default(true),
  GRAPHQL_INTROSPECTION: booleanFlag.optional(),
  DEMO_ACCOUNT: booleanFlag.optional(),
  SHUTDOWN_TIMEOUT_MS: decimal(0, 86_400_000).default(10_000),
  WEB_CONCURRENCY: decimal(1, 64).default(1),
  IMPORT_DIR: z.string().min(1).optional(),
  IMPORT_MAX_INFLATED_MB: decimal(1, 4_096).default(100),
  DEFAULT_ALLOWED_COUNTRIES: countryList.default(''),
  FRAUD_FLOOD_IDENTICAL: decimal(0, MAX_GUARD_LIMIT).default(6),
  FRAUD_FLOOD_MAX: decimal(0, MAX_GUARD_LIMIT).default(20),
  FRAUD_VELOCITY_MAX: decimal(0, MAX_GUARD_LIMIT).default(50),
  FRAUD_COUNTRY_CAPS: z
    .string()
    .superRefine((value, context) => {
      try {
        parseCountryCaps(value);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
      }
    })
    .default(''),
  FRAUD_COOL_OFF_S: decimal(1, MAX_COOL_OFF_SECONDS).default(3600),
  FRAUD_MODE: z.enum(['block', 'monitor']).default('block'),
  FRAUD_WHEN_REDIS_DOWN: z.enum(['allow', 'refuse']).default('allow'),
});

export type Environment = z.infer<typeof environmentSchema>;

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
