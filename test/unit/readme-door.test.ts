import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The README is the door: what a newcomer needs to start, with the detail in docs/. It had grown
// to 16.4 KB, with the whole carriers guide in it.
const readme = readFileSync(new URL('../../README.md', import.meta.url));

describe('the README', () => {
  it('stays a door of at most 12 KB', () => {
    expect(readme.byteLength).toBeLessThanOrEqual(12_000);
  });

  it('leaves the carriers guide and the dependencies to docs/, linking both', () => {
    const text = readme.toString('utf8');
    expect(text).toContain('docs/carriers.md');
    expect(text).toContain('docs/dependencies.md');
  });
});
