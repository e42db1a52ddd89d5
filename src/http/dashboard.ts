import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { sendError } from '../rest/error-response.js';

// Only this host's script, stylesheet and API: no inline script or style, nothing elsewhere.
const DASHBOARD_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tern dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/dashboard.css">
</head>
<body>
<div id="app"><p>Loading the dashboard…</p></div>
<script type="module" src="/dashboard/dashboard.js"></script>
</body>
</html>
`;

/** Where the build (scripts/build-dashboard.mjs) leaves the page's bundle, from src/http or dist/http. */
const BUNDLE_DIR = new URL('../../dist/dashboard/', import.meta.url);

const ASSETS = {
  'dashboard.js': 'application/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
} as const;

function readBundle(): Map<string, Buffer> | null {
  try {
    return new Map(Object.keys(ASSETS).map((name) => [name, readFileSync(new URL(name, BUNDLE_DIR))]));
  } catch {
    return null;
  }
}

/**
 * `GET /dashboard`: the page, its script and its stylesheet, read once from the bundle `npm run
 * build` makes. Without a bundle (sources run without a build) the page says how to make one.
 */
export function registerDashboard(app: FastifyInstance) {
  const bundle = readBundle();
  app.get('/dashboard', async (_request, reply) => {
    reply.header('content-security-policy', DASHBOARD_POLICY).header('cache-control', 'no-cache');
    if (!bundle)
      return reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The dashboard is not built: run npm run build');
    return reply.type('text/html; charset=utf-8').send(PAGE);
  });
  for (const [name, type] of Object.entries(ASSETS))
    app.get(`/dashboard/${name}`, async (_request, reply) => {
      const body = bundle?.get(name);
      if (!body) return sendError(reply, 'not_found', 'The dashboard is not built: run npm run build');
      return reply
        .header('content-security-policy', DASHBOARD_POLICY)
        .header('cache-control', 'no-cache')
        .type(type)
        .send(body);
    });
}
