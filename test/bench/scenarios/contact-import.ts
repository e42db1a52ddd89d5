import { readFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
import { pollUntil } from '../../support/tern-processes.js';
import type { Bench, Layout, Service } from '../bench.js';
import type { FlowResult, RunnableScenario } from './scenario.js';

export const ROWS = 100_000;
const DUPLICATES = 1_000;
const INVALID = 10;
// Well beyond the targets (5 s for CSV, 20 s for XLSX): past it the scenario reports how far it got.
const DEADLINE_MS = 90_000;
const RSS_SAMPLE_MS = 50;
const COLUMNS = ['phone', 'name', 'email', 'document', 'tags'];

type Format = 'csv' | 'xlsx';

const phone = (i: number) => `55119${String(10_000_000 + i).padStart(8, '0')}`;

/**
 * The "done when" file: 100,000 data rows, the first 10 with an invalid phone, the next 1,000
 * repeating phones of later rows; 98,990 contacts to import.
 */
function rows(count: number): string[][] {
  return Array.from({ length: count }, (_, i) => {
    const number = i < INVALID ? `0${i}` : i < INVALID + DUPLICATES ? phone(i + 10_000) : phone(i);
    return [number, `Contact ${i}`, `contact${i}@example.com`, `DOC-${i}`, i % 3 ? 'vip;lead' : 'new|sp'];
  });
}

const files = new Map<string, Uint8Array<ArrayBuffer>>();

/** Built once per run, before any window opens; the XLSX phones are number cells, as spreadsheets store them. */
async function file(format: Format, count: number): Promise<Uint8Array<ArrayBuffer>> {
  const key = `${format}:${count}`;
  const cached = files.get(key);
  if (cached) return cached;
  let content: Uint8Array<ArrayBuffer>;
  if (format === 'csv') {
    content = new TextEncoder().encode(
      `${[COLUMNS, ...rows(count)].map((row) => row.join(',')).join('\n')}\n`,
    );
  } else {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Contacts');
    sheet.addRow(COLUMNS);
    for (const [number, ...rest] of rows(count))
      sheet.addRow([/^\d{7,}$/.test(number!) ? Number(number) : number, ...rest]);
    content = new Uint8Array(await workbook.xlsx.writeBuffer());
  }
  files.set(key, content);
  return content;
}

/** The resident memory of each process, sampled; /proc's VmHWM would include start-up. */
function sampleRss(pids: number[]) {
  const read = () =>
    pids.map((pid) => {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
      } catch {
        return 0;
      }
    });
  const idle = Math.max(...read());
  let peak = idle;
  const timer = setInterval(() => {
    peak = Math.max(peak, ...read());
  }, RSS_SAMPLE_MS);
  return {
    stop: () => {
      clearInterval(timer);
      return { idleRssMiB: idle, peakRssMiB: Math.max(peak, ...read()) };
    },
  };
}

interface Job {
  job: string;
  status: string;
  total_rows: number;
  imported: number;
  duplicates: number;
  invalid: number;
  error?: { code: string; message: string };
}

async function call(
  service: Service,
  authorization: string,
  path: string,
  init: RequestInit = {},
): Promise<any> {
  const response = await fetch(`${service.url}${path}`, {
    ...init,
    headers: { authorization, ...(init.headers as Record<string, string>) },
  });
  const body = await response.json();
  if (response.status >= 300)
    throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

async function upload(
  service: Service,
  authorization: string,
  campaign: string,
  format: Format,
  content: Uint8Array<ArrayBuffer>,
): Promise<string> {
  const form = new FormData();
  for (const column of COLUMNS) form.append(`${column}_column`, column);
  form.append('file', new Blob([content]), `contacts.${format}`);
  const accepted = await call(service, authorization, `/v1/campaigns/${campaign}/contacts/import`, {
    method: 'POST',
    body: form,
  });
  return accepted.job as string;
}

async function ended(
  service: Service,
  authorization: string,
  campaign: string,
  job: string,
  timeoutMs: number,
): Promise<Job | null> {
  try {
    return await pollUntil(
      'the import to end',
      async () => {
        service.assertRunning();
        const body = (await call(
          service,
          authorization,
          `/v1/campaigns/${campaign}/contacts/import/${job}`,
        )) as Job;
        return body.status === 'processing' ? undefined : body;
      },
      { timeoutMs: Math.max(timeoutMs, 0), intervalMs: 50 },
    );
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('timed out')) throw error;
    return null;
  }
}

async function run(bench: Bench, layout: Layout, format: Format): Promise<FlowResult> {
  const content = await file(format, ROWS);
  const warmContent = await file(format, 100);
  const service = await bench.startGateway(layout, { workers: true });
  return bench.withService(service, async () => {
    const authorization = await bench.bearer(service);
    const newCampaign = async () =>
      (
        await call(service, authorization, '/v1/campaigns', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"name":"Import bench"}',
        })
      ).campaign as string;
    // A small import first: the worker is known to run, and its code (exceljs too) is loaded.
    const warmCampaign = await newCampaign();
    if (
      !(await ended(
        service,
        authorization,
        warmCampaign,
        await upload(service, authorization, warmCampaign, format, warmContent),
        60_000,
      ))
    ) {
      throw new Error('the warm-up import did not end within 60 s');
    }
    const campaign = await newCampaign();

    const memory = sampleRss(service.pids());
    const watch = await bench.watch(service);
    const start = Date.now();
    const job = await upload(service, authorization, campaign, format, content);
    const uploadMs = Date.now() - start;
    const outcome = await ended(service, authorization, campaign, job, DEADLINE_MS - uploadMs);
    const wallSeconds = (Date.now() - start) / 1000;
    const window = await watch.stop(ROWS);
    const { idleRssMiB, peakRssMiB } = memory.stop();
    const incomplete =
      outcome === null
        ? `not ended within ${DEADLINE_MS / 1000} s`
        : outcome.status !== 'completed'
          ? `${outcome.status}: ${outcome.error?.code} ${outcome.error?.message}`
          : outcome.imported !== ROWS - DUPLICATES - INVALID ||
              outcome.duplicates !== DUPLICATES ||
              outcome.invalid !== INVALID
            ? `counted imported ${outcome.imported}, duplicates ${outcome.duplicates}, invalid ${outcome.invalid}`
            : null;
    return {
      result: {
        kind: 'flow' as const,
        items: ROWS,
        intakePerSecond: ROWS / (uploadMs / 1000),
        accepted: outcome?.total_rows ?? 0,
        completed: outcome?.imported ?? 0,
        failed: (outcome?.duplicates ?? 0) + (outcome?.invalid ?? 0),
        wallSeconds,
        perSecond: ROWS / wallSeconds,
        p50Ms: uploadMs,
        p99Ms: uploadMs,
        incomplete,
        costs: { ...window.costs, pgTransactionsPerMessage: null },
        profile: null,
        memory: { idleRssMiB, peakRssMiB },
      },
      window,
    };
  });
}

const describe = (format: Format, bytes: string) =>
  `${format === 'csv' ? 'a CSV' : 'an XLSX'} of ${ROWS.toLocaleString('en')} contacts (${bytes}; 1,000 duplicated and 10 invalid phones) uploaded to \`POST /v1/campaigns/{campaign}/contacts/import\` and imported by the workers, timed from the start of the upload to the job's \`completed\`. ` +
  'Rows below: data rows read / contacts imported / rows skipped (duplicates and invalid); "intake" is rows/s of the upload itself, and p50 = p99 its time; memory is the resident size of the largest Tern process before the upload and at its peak (sampled every 50 ms)';

export const contactImportCsv: RunnableScenario = {
  name: 'import-csv',
  describe: describe('csv', '7 MB'),
  run: (bench, layout) => run(bench, layout, 'csv'),
};

export const contactImportXlsx: RunnableScenario = {
  name: 'import-xlsx',
  describe: describe('xlsx', '4 MB'),
  run: (bench, layout) => run(bench, layout, 'xlsx'),
};
