import { readFileSync } from 'node:fs';
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { printTernSchema, SCHEMA_FILE } from '../../src/graphql/print-schema.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('printing the schema', () => {
  it('prints the committed schema without configuration or a connection to anything', () => {
    const connect = vi.spyOn(net.Socket.prototype, 'connect');
    expect(printTernSchema()).toBe(readFileSync(SCHEMA_FILE, 'utf8'));
    expect(connect).not.toHaveBeenCalled();
  });
});
