import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('LOG_FORMAT', () => {
  it('is pretty by default in development on a terminal, for the person reading it', () => {
    expect(loadConfig({}, { terminal: true }).logFormat).toBe('pretty');
  });

  it('is JSON by default into a pipe or a file, and in test or production', () => {
    expect(loadConfig({}, { terminal: false }).logFormat).toBe('json');
    expect(loadConfig({ NODE_ENV: 'test' }, { terminal: true }).logFormat).toBe('json');
    const production = {
      NODE_ENV: 'production',
      JWT_SECRET: 'x'.repeat(32),
      WEBHOOK_SECRET_KEY: 'a'.repeat(64),
    };
    expect(loadConfig(production, { terminal: true }).logFormat).toBe('json');
  });

  it('is what the variable says when it is set', () => {
    expect(loadConfig({ LOG_FORMAT: 'json' }, { terminal: true }).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }, { terminal: false }).logFormat).toBe('pretty');
  });
});
