import { mkdirSync, writeFileSync } from 'node:fs';
import { ternOpenApi } from '../src/rest/openapi-document.js';

// Written from the code, no server needed: `npm run lint:openapi` lints this file.
const target = new URL('../client/generated/openapi.json', import.meta.url);
mkdirSync(new URL('.', target), { recursive: true });
writeFileSync(target, `${JSON.stringify(ternOpenApi(), null, 2)}\n`);
process.stdout.write(`wrote ${target.pathname}\n`);
