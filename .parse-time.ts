import { writeFileSync } from 'node:fs';
import { ContactRowMapper } from './src/modules/imports/contact-rows.js';
import { readSheetRows } from './src/modules/imports/sheet-reader.js';
import { parseInThread } from './src/modules/imports/import-parser.js';

const phone = (i: number) => `55119${String(10_000_000 + i).padStart(8, '0')}`;
const rows = Array.from({ length: 100_000 }, (_, i) => [i < 10 ? `0${i}` : phone(i), `Contact ${i}`, `contact${i}@example.com`, `DOC-${i}`, i % 3 ? 'vip;lead' : 'new|sp']);
writeFileSync('/tmp/parse/c.csv', `${[['phone', 'name', 'email', 'document', 'tags'], ...rows].map((r) => r.join(',')).join('\n')}\n`);
const options = { phoneColumn: 'phone', nameColumn: 'name', emailColumn: 'email', documentColumn: 'document', tagsColumn: 'tags', delimiter: ',', hasHeader: true } as any;
for (let round = 0; round < 3; round++) {
  let t0 = performance.now();
  let n = 0;
  for await (const _row of readSheetRows('/tmp/parse/c.csv', 'csv', ',', { maxInflatedBytes: 1e9 })) n++;
  const read = performance.now() - t0;
  t0 = performance.now();
  const mapper = new ContactRowMapper(options);
  for await (const row of readSheetRows('/tmp/parse/c.csv', 'csv', ',', { maxInflatedBytes: 1e9 })) mapper.accept(row);
  const mapped = performance.now() - t0;
  t0 = performance.now();
  const it = parseInThread({ path: '/tmp/parse/c.csv', format: 'csv', options, maxInflatedBytes: 1e9 } as any);
  let s = await it.next(); while (!s.done) s = await it.next();
  console.log({ n, readMs: Math.round(read), readAndMapMs: Math.round(mapped), threadMs: Math.round(performance.now() - t0) });
}
