// Bundles the dashboard page (src/dashboard/) with esbuild into dist/dashboard/: one script and
// one stylesheet, Preact and uPlot included, so that Tern serves it from this host alone.
// Run by `npm run build`, by scripts/build-if-stale.mjs before `npm start`, and by the tests.
import { readdirSync as readdir, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const DASHBOARD_SOURCES = join(root, 'src', 'dashboard');
export const DASHBOARD_BUNDLE = join(root, 'dist', 'dashboard', 'dashboard.js');

export async function buildDashboard() {
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: { dashboard: join(DASHBOARD_SOURCES, 'main.tsx') },
    outdir: join(root, 'dist', 'dashboard'),
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: join(DASHBOARD_SOURCES, 'tsconfig.json'),
    logLevel: 'warning',
  });
}

/** True when a source of the page is newer than its bundle (or there is none). */
export function dashboardIsStale() {
  const newest = (path) => {
    const stat = statSync(path);
    if (!stat.isDirectory()) return stat.mtimeMs;
    return Math.max(stat.mtimeMs, ...readdir(path).map((entry) => newest(join(path, entry))));
  };
  try {
    return newest(DASHBOARD_SOURCES) > statSync(DASHBOARD_BUNDLE).mtimeMs;
  } catch {
    return true;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildDashboard();
