import { parentPort, workerData } from 'node:worker_threads';
import { knowDatabaseTimeZones } from '../../lib/time-zone.js';
import { type ContactRow, ContactRowMapper } from './contact-rows.js';
import { ImportFileError } from './import-file-error.js';
import {
  PARSER_BATCH,
  PARSER_PROGRESS_EVERY,
  type ParserInput,
  type ParserMessage,
} from './import-parser.js';
import { readSheetRows } from './sheet-reader.js';

// The import parser's thread (see parseInThread): reads the file, maps its rows to contacts
// and hands them over a batch at a time, each after the previous one was taken.

const input = workerData as ParserInput;
if (input.databaseTimeZones) knowDatabaseTimeZones(input.databaseTimeZones);
const port = parentPort!;
const send = (message: ParserMessage) => port.postMessage(message);

let taken = 0;
let wake: (() => void) | null = null;
port.on('message', () => {
  taken += 1;
  wake?.();
});

let handed = 0;
async function handOver(contacts: ContactRow[]): Promise<void> {
  while (handed > taken) await new Promise<void>((resolve) => (wake = resolve));
  send({ kind: 'batch', contacts });
  handed += 1;
}

const mapper = new ContactRowMapper(input.options);
let batch: ContactRow[] = [];
try {
  for await (const row of readSheetRows(input.path, input.format, input.options.delimiter, {
    maxInflatedBytes: input.maxInflatedBytes,
  })) {
    const before = mapper.rows;
    const contact = mapper.accept(row);
    if (contact) batch.push(contact);
    if (batch.length >= PARSER_BATCH) {
      await handOver(batch);
      batch = [];
    }
    if (mapper.rows !== before && mapper.rows % PARSER_PROGRESS_EVERY === 0)
      send({ kind: 'progress', rows: mapper.rows });
  }
  mapper.finish();
  if (batch.length > 0) await handOver(batch);
  send({
    kind: 'done',
    file: {
      rows: mapper.rows,
      invalid: mapper.invalid,
      duplicates: mapper.duplicates,
      errors: mapper.errors,
    },
  });
} catch (error) {
  if (!(error instanceof ImportFileError)) throw error;
  send({ kind: 'refused', code: error.code, message: error.message });
}
port.removeAllListeners('message');
