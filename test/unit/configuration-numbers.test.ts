import { describe, expect, it } from 'vitest';
import { environmentSchema } from '../../src/config/environment.js';
import { loadConfig } from '../../src/config.js';

type Name = keyof typeof environmentSchema.shape;

/** The variables that take a number: each accepts one of these plain values as a number. */
const numeric = (Object.keys(environmentSchema.shape) as Name[]).filter((name) =>
  ['0', '1', '7', '100', '1000'].some((value) => {
    const parsed = environmentSchema.shape[name].safeParse(value);
    return parsed.success && typeof parsed.data === 'number';
  }),
);

/** Not plain decimal digits, though `Number()` reads most of them as numbers (a blank as 0). */
const NOT_PLAIN_DECIMALS = [
  ' ',
  '\t',
  ' \n ',
  '0x10',
  '1e1',
  '1.0',
  '+5',
  '-1',
  ' 5',
  '5 ',
  '1_000',
  'Infinity',
];

describe('numeric settings', () => {
  it('are found: every limit, port, size and duration', () => {
    expect(numeric).toEqual(
      expect.arrayContaining([
        'PORT',
        'METRICS_PORT',
        'RETENTION_DAYS',
        'RATE_LIMIT_MAX',
        'RATE_LIMIT_LOGIN_MAX',
        'RATE_LIMIT_SEND_MESSAGE_MAX',
        'CARRIER_MAX_PER_SECOND',
        'REDIS_COMMAND_TIMEOUT_MS',
        'SHUTDOWN_TIMEOUT_MS',
      ]),
    );
    expect(numeric.length).toBeGreaterThanOrEqual(25);
  });

  it.for(NOT_PLAIN_DECIMALS)('refuse %j, naming the variable, rather than read it as a number', (value) => {
    const accepted = numeric.filter((name) => {
      try {
        loadConfig({ [name]: value });
        return true;
      } catch (error) {
        expect((error as Error).message).toMatch(new RegExp(`^invalid configuration: ${name}: `));
        return false;
      }
    });
    expect(accepted).toEqual([]);
  });

  it('take plain decimal digits, leading zeros included, and an empty value as unset', () => {
    const config = loadConfig({
      PORT: '0080',
      RATE_LIMIT_LOGIN_MAX: '0',
      RATE_LIMIT_SEND_MESSAGE_MAX: '',
      RETENTION_DAYS: '7',
      METRICS_PORT: 'off',
    });
    expect(config).toMatchObject({
      port: 80,
      loginRateLimitMax: 0,
      sendMessageRateLimitMax: 300,
      retentionDays: 7,
      metrics: null,
    });
  });

  it('keep a duration a timer can wait: longer ones would fire at once', () => {
    for (const name of ['RECOVERY_INTERVAL_MS', 'RECOVERY_AFTER_MS', 'CLAIM_LEASE_MS', 'SHUTDOWN_TIMEOUT_MS'])
      expect(() => loadConfig({ [name]: '2147483648' }), name).toThrow(new RegExp(`${name}: Too big`));
  });
});
