import { createRequire } from 'node:module';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

const require = createRequire(import.meta.url);

const UNIT_TESTS = 'test/unit/**/*.test.ts';

/** What every integration project shares: the harness's global setup and its time limits. */
const INTEGRATION = {
  globalSetup: ['test/support/global-setup.ts'],
  // A worker keeps the modules it loaded for its next file: loading the app's module graph took
  // about 2 s per file, a quarter of the run. Files share nothing else: each has its own
  // database, Redis prefix and Tern instances, and stops what it started.
  isolate: false,
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

/**
 * The tests of sends, quotas, campaigns, imports, webhooks, retention and the CLI, run again with
 * Tern's DATABASE_URL through a PgBouncer in transaction pooling that the global setup starts.
 */
export const PGBOUNCER_PASS = [
  'test/messages.test.ts',
  'test/quotas.test.ts',
  'test/campaigns.test.ts',
  'test/imports.test.ts',
  'test/import-durability.test.ts',
  'test/webhooks.test.ts',
  'test/retention.test.ts',
  'test/access-processes.test.ts',
];

const projects: TestProjectInlineConfiguration[] = [
  {
    extends: true,
    // The pure rules, without PostgreSQL or Redis: `npm run test:unit`.
    test: { name: 'unit', include: [UNIT_TESTS] },
  },
  {
    extends: true,
    test: {
      name: 'integration',
      include: ['test/**/*.test.ts'],
      exclude: [...configDefaults.exclude, UNIT_TESTS],
      ...INTEGRATION,
    },
  },
];
// `npm test` and `npm run test:pgbouncer` add the PgBouncer pass (TEST_PGBOUNCER_PASS=true), so
// that it shares the run's two workers with the rest; `npx vitest run FILE` runs a file once.
if (process.env.TEST_PGBOUNCER_PASS === 'true')
  projects.push({ extends: true, test: { name: 'pgbouncer', include: PGBOUNCER_PASS, ...INTEGRATION } });

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS build for the dependencies (Pothos, Yoga); the project's own
    // modules must get the same copy, not the .mjs one Vite would pick, or schemas cross realms.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    pool: 'forks',
    // Each integration file has its own database and Redis prefix, so files run side by side, two
    // at a time: several files start whole Tern processes, and the machines have two cores.
    maxWorkers: 2,
    env: { NODE_ENV: 'test' },
    projects,
  },
});
