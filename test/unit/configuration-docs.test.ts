import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { environmentSchema } from '../../src/config/environment.js';

const CONFIGURATION_DOC = new URL('../../docs/configuration.md', import.meta.url);

/** The rows of the page's variable table: `| \`NAME\` | default | meaning |`. */
function documentedVariables(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync(CONFIGURATION_DOC, 'utf8').split('\n')) {
    const row = /^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/.exec(line);
    if (row) rows.set(row[1]!, row[2]!.trim());
  }
  return rows;
}

/** The default the code gives a variable left unset, as the page writes it; null when it has none of its own. */
function documentedDefault(name: keyof typeof environmentSchema.shape): string | null {
  const unset = environmentSchema.shape[name].safeParse(undefined);
  if (!unset.success || unset.data === undefined) return null;
  return unset.data === '' ? 'empty' : `\`${String(unset.data)}\``;
}

describe('docs/configuration.md', () => {
  const documented = documentedVariables();
  const read = Object.keys(environmentSchema.shape) as (keyof typeof environmentSchema.shape)[];

  it('names every variable src/config.ts reads, and no other', () => {
    expect([...documented.keys()].sort()).toEqual([...read].sort());
  });

  it('gives each variable the default the code gives it', () => {
    const mismatches = read.flatMap((name) => {
      const expected = documentedDefault(name);
      const cell = documented.get(name);
      return expected === null || cell === expected ? [] : [`${name}: documented ${cell}, code ${expected}`];
    });
    expect(mismatches).toEqual([]);
  });
});

const README = new URL('../../README.md', import.meta.url);

/** The rows of the README's "Main settings" table. */
function mainSettings(): Map<string, string> {
  const text = readFileSync(README, 'utf8');
  const section = text.slice(
    text.indexOf('## Main settings'),
    text.indexOf('\n## ', text.indexOf('## Main settings') + 1),
  );
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const row = /^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/.exec(line);
    if (row) rows.set(row[1]!, row[2]!.trim());
  }
  return rows;
}

describe("README.md's main settings", () => {
  const shown = mainSettings();

  it('name what a second deployment on the same host must set apart', () => {
    // The listeners' ports (the second start fails on a taken one) and where its state lives.
    expect([...shown.keys()]).toEqual(
      expect.arrayContaining(['PORT', 'METRICS_PORT', 'DATABASE_URL', 'REDIS_PREFIX']),
    );
  });

  it('are variables the code reads, with the defaults the code gives them', () => {
    const read = new Set(Object.keys(environmentSchema.shape));
    const mismatches = [...shown].flatMap(([name, cell]) => {
      if (!read.has(name)) return [`${name}: not a setting`];
      const expected = documentedDefault(name as keyof typeof environmentSchema.shape);
      return expected === null || cell === expected ? [] : [`${name}: shown ${cell}, code ${expected}`];
    });
    expect(mismatches).toEqual([]);
  });
});
