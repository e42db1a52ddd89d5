import { writeFileSync } from 'node:fs';
import { printTernSchema, SCHEMA_FILE } from '../src/graphql/print-schema.js';

writeFileSync(SCHEMA_FILE, printTernSchema());
process.stdout.write(`wrote ${SCHEMA_FILE.pathname}\n`);
