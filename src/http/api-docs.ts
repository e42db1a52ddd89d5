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
</head>
<body>
<redoc spec-url="/v1/openapi.json"></redoc>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>
`;

/** `GET /docs`: the /v1 reference page, rendered by Redoc from the installed package (no CDN). */
export function registerApiDocs(app: FastifyInstance) {
  // Read once: the bundle is about 1 MB and never changes while the process runs.
  const bundle = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'));
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
