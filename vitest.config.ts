import { createRequire } from 'node:module';
import { configDefaults, defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

const UNIT_TESTS = 'test/unit/**/*.test.ts';

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
    projects: [
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
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
