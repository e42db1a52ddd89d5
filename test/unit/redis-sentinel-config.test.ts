import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/environment.js';
import { describeRedis, loadConfig } from '../../src/config.js';

describe('REDIS_SENTINELS', () => {
  it('reads host:port pairs, an IPv6 address in brackets, and the name and password that go with them', () => {
    const config = loadConfig({
      REDIS_URL: 'rediss://:secret@ignored:6379/2',
      REDIS_SENTINELS: 'sentinel-a.internal:26379, 10.0.0.2:26380,[::1]:26381',
      REDIS_SENTINEL_NAME: 'tern-main',
      REDIS_SENTINEL_PASSWORD: 'sentinel secret',
    });
    expect(config.redis).toEqual({
      url: 'rediss://:secret@ignored:6379/2',
      sentinel: {
        sentinels: [
          { host: 'sentinel-a.internal', port: 26379 },
          { host: '10.0.0.2', port: 26380 },
          { host: '::1', port: 26381 },
        ],
        name: 'tern-main',
        password: 'sentinel secret',
      },
    });
    expect(describeRedis(config.redis)).toBe(
      'the master "tern-main" of the sentinels sentinel-a.internal:26379,10.0.0.2:26380,::1:26381',
    );
  });

  it('leaves Redis at REDIS_URL without it', () => {
    expect(loadConfig({}).redis).toEqual({ url: 'redis://127.0.0.1:6379', sentinel: null });
  });

  it.each([
    'sentinel',
    'sentinel:',
    'sentinel:0',
    'sentinel:65536',
    'a:1,,b:2',
    'a b:1',
    Array.from({ length: 17 }, (_, i) => `s${i}:26379`).join(','),
  ])('stops start-up on %j', (value) => {
    expect(() => loadConfig({ REDIS_SENTINELS: value, REDIS_SENTINEL_NAME: 'tern' })).toThrow(
      /REDIS_SENTINELS/,
    );
  });

  it('needs REDIS_SENTINEL_NAME with it, and nothing of it without it', () => {
    expect(() => loadConfig({ REDIS_SENTINELS: 'a:26379' })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_SENTINELS: 'a:26379' })).toThrow(/REDIS_SENTINEL_NAME is required/);
    expect(() => loadConfig({ REDIS_SENTINEL_NAME: 'tern' })).toThrow(/need REDIS_SENTINELS/);
    expect(() => loadConfig({ REDIS_SENTINELS: 'a:26379', REDIS_SENTINEL_NAME: 'two words' })).toThrow(
      /REDIS_SENTINEL_NAME/,
    );
  });
});
