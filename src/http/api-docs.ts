import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';

const require = createRequire(import.meta.url);

// Redoc's styles are injected at run time (styled-components) and its search runs in a worker
// made from a blob; nothing else is allowed, and nothing leaves this host.
const DOCS_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tern /v1 API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<redoc spec-url="/v1/openapi.json" side-nav-style="path-only" path-in-middle-panel="true" json-sample-expand-level="all"></redoc>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>
`;

// Redoc's sidebar footer shows a logo from Redocly's CDN, with no option to leave it out. The
// bundle is served with that address replaced by an empty data: URL, which the image fails to
// load, and Redoc then drops it: the link stays, and the page asks nothing of another host.
const REDOC_CDN_LOGO = '"https://cdn.redoc.ly/redoc/logo-mini.svg"';

/** Redoc's bundle without its one request to another host; refuses to start if Redoc changed it. */
function redocBundle(): string {
  const bundle = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  if (bundle.split(REDOC_CDN_LOGO).length !== 2)
    throw new Error(
      'redoc.standalone.js no longer loads its logo as expected: check /docs for requests elsewhere',
    );
  return bundle.replace(REDOC_CDN_LOGO, '"data:,"');
}

/** `GET /docs`: the /v1 reference page, rendered by Redoc from the installed package (no CDN). */
export function registerApiDocs(app: FastifyInstance) {
  // Read once: the bundle is about 1 MB and never changes while the process runs.
  const bundle = redocBundle();
  app.get('/docs', async (_request, reply) =>
    reply.header('content-security-policy', DOCS_POLICY).type('text/html; charset=utf-8').send(PAGE),
  );
  app.get('/docs/redoc.standalone.js', async (_request, reply) =>
    reply
      .header('content-security-policy', DOCS_POLICY)
      .header('cache-control', 'public, max-age=3600')
      .type('application/javascript; charset=utf-8')
      .send(bundle),
  );
}
