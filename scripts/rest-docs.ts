import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { ternOpenApi } from '../src/rest/openapi-document.js';

// The "Routes" part of docs/rest-api.md, written from the OpenAPI document so that the page says
// what the service answers: `npm run docs:routes` rewrites it, and a unit test fails when the
// page and the document disagree.

const PAGE = new URL('../docs/rest-api.md', import.meta.url);
const ROUTES_HEADING = '## Routes\n';

interface Operation {
  description: string;
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: { properties?: object; required?: string[] } }> };
  responses: Record<string, Response>;
}

interface Response {
  content?: Record<
    string,
    { schema?: { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } } }
  >;
}

/** The error codes a response may carry, as its body's schema lists them. */
function codesOf(response: Response): string[] {
  return response.content?.['application/json']?.schema?.properties?.error?.properties?.code?.enum ?? [];
}

function section(method: string, path: string, operation: Operation): string {
  const lines = [`### ${method.toUpperCase()} ${path}`, '', `${operation.description.replace(/\.?$/, '.')}`];
  if (operation.parameters?.length)
    lines.push('', `Parameters: ${operation.parameters.map((p) => `\`${p.name}\` (${p.in})`).join(', ')}.`);
  for (const [mediaType, { schema }] of Object.entries(operation.requestBody?.content ?? {})) {
    const required = new Set(schema.required ?? []);
    const fields = Object.keys(schema.properties ?? {}).map(
      (name) => `\`${name}\`${required.has(name) ? ' (required)' : ''}`,
    );
    lines.push('', `Body (${mediaType}): ${fields.join(', ')}.`);
  }
  // 500 and 503 can answer any route: the page says so once, above the routes.
  const statuses = Object.entries(operation.responses)
    .filter(([status]) => Number(status) < 500)
    .map(([status, response]) => {
      const codes = codesOf(response);
      return codes.length > 0 ? `${status} (${codes.map((code) => `\`${code}\``).join(', ')})` : status;
    });
  lines.push('', `Statuses: ${statuses.join('; ')}.`);
  return lines.join('\n');
}

/** Every route of the document, in its order, as the page lists them. */
export function routeReference(): string {
  const document = ternOpenApi() as unknown as { paths: Record<string, Record<string, Operation>> };
  return Object.entries(document.paths)
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => section(method, path, operation)),
    )
    .join('\n\n');
}

/** The page as it should be: its own text up to "## Routes", then the reference. */
export function restApiPage(current = readFileSync(PAGE, 'utf8')): string {
  const start = current.indexOf(ROUTES_HEADING);
  if (start < 0) throw new Error('docs/rest-api.md has no "## Routes" heading');
  return `${current.slice(0, start)}${ROUTES_HEADING}\n${routeReference()}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(PAGE, restApiPage());
  process.stdout.write(`wrote ${PAGE.pathname}\n`);
}
