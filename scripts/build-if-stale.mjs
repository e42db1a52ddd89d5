// Run before `npm start` (start:api, start:worker), `npm run cli` and the tests: compiles src/ to dist/
// only when a source is newer than the last build, so that a restart does not pay for a compile it does
// not need.
// Plain JavaScript, so that it needs neither tsx nor a compile of its own.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDashboard, dashboardIsStale } from './build-dashboard.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
// tsc writes every output on each build, so the entry point's time is the build's.
const built = join(root, 'dist', 'main.js');

function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newestChange(join(path, entry))));
}

function lastBuild() {
  try {
    return statSync(built).mtimeMs;
  } catch {
    return -Infinity;
  }
}

const sources = Math.max(
  newestChange(join(root, 'src')),
  ...['tsconfig.json', 'tsconfig.build.json'].map((file) => statSync(join(root, file)).mtimeMs),
);
if (sources > lastBuild()) {
  process.stdout.write('tern: the sources changed since the last build; compiling to dist/\n');
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    process.stderr.write(
      'tern: dist/ is out of date and TypeScript is not installed (npm ci installs it; npm run build compiles)\n',
    );
    process.exit(1);
  }
  const { status } = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (status !== 0) process.exit(status ?? 1);
}
if (dashboardIsStale()) {
  process.stdout.write('tern: the dashboard changed since the last build; bundling it to dist/dashboard/\n');
  // Without esbuild (installed without dev dependencies) Tern still starts; /dashboard says to build.
  await buildDashboard().catch((error) =>
    process.stderr.write(`tern: the dashboard was not bundled (${error.message}); npm run build makes it\n`),
  );
}
