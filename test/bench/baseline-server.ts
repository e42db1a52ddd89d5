import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';
import { SEND_JOB_SIZE, sendJobId } from '../../src/jobs/message-send.job.js';
import { closeQueues, createQueues } from '../../src/jobs/queues.js';
import { createProducerConnection } from '../../src/jobs/redis-connections.js';
import { Batcher } from '../../src/lib/batcher.js';
import { newId } from '../../src/lib/ids.js';

// The floor under the gateway: the durable work of one send (one INSERT of the same row through
// pg, one BullMQ add of the same job) behind a bare node:http server, with nothing of the
// gateway around it: no Fastify, no GraphQL, no token check, no validation beyond reading the
// body. Started by the harness with the environment Tern gets, plus BASELINE_ACCOUNT.
// With BASELINE_BATCHING=true it batches as Tern's acceptance does: the sends that arrive while a
// batch is being written go together in the next, one multi-row INSERT and one addBulk of jobs of
// up to SEND_JOB_SIZE messages, so the gateway is also compared with the best the same stack does.

const env = process.env;
const required = (name: string): string => {
  const value = env[name];
  if (!value) throw new Error(`baseline: ${name} is required`);
  return value;
};
const accountId = required('BASELINE_ACCOUNT');
const pool = new pg.Pool({
  connectionString: required('DATABASE_URL'),
  max: Number(env.DATABASE_POOL_SIZE ?? 20),
});
// The same command timeout as Tern's default, so the baseline's connection behaves as the product's.
const redis = createProducerConnection(
  { url: required('REDIS_URL'), sentinel: null },
  Number(env.REDIS_COMMAND_TIMEOUT_MS ?? 1_000),
);
// The product's producer, so the job carries the same options (attempts, backoff, removal).
const queues = createQueues(redis, required('REDIS_PREFIX'));

function reply(response: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

interface NewMessage {
  id: string;
  to: string;
  text: string;
  createdAt: Date;
}

async function storeOne(message: NewMessage): Promise<void> {
  // The bench's text is one GSM-7 segment; working that out is the gateway's business, not durable work.
  await pool.query(
    'INSERT INTO messages (id, account_id, "to", text, encoding, segments, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [message.id, accountId, message.to, message.text, 'GSM-7', 1, message.createdAt],
  );
  await queues.messageSend.add('send', { messageIds: [message.id] }, { jobId: message.id });
}

async function storeMany(messages: NewMessage[]): Promise<undefined[]> {
  await pool.query(
    `INSERT INTO messages (id, account_id, "to", text, encoding, segments, created_at)
     SELECT id, $2, "to", text, 'GSM-7', 1, created_at
     FROM unnest($1::text[], $3::text[], $4::text[], $5::timestamptz[]) AS v(id, "to", text, created_at)`,
    [
      messages.map((m) => m.id),
      accountId,
      messages.map((m) => m.to),
      messages.map((m) => m.text),
      messages.map((m) => m.createdAt.toISOString()),
    ],
  );
  const jobs = [];
  for (let start = 0; start < messages.length; start += SEND_JOB_SIZE) {
    const messageIds = messages.slice(start, start + SEND_JOB_SIZE).map((m) => m.id);
    jobs.push({ name: 'send', data: { messageIds }, opts: { jobId: sendJobId(messageIds) } });
  }
  await queues.messageSend.addBulk(jobs);
  return messages.map(() => undefined);
}

// Tern's acceptance batches with these settings (src/modules/messages/acceptance-batches.ts).
const batched = new Batcher(storeMany, { maxBatch: SEND_JOB_SIZE, maxInFlight: 1 });
const store = env.BASELINE_BATCHING === 'true' ? (message: NewMessage) => batched.add(message) : storeOne;

async function send(request: IncomingMessage, response: ServerResponse) {
  const body = (await readJson(request)) as { to?: unknown; message?: unknown };
  if (typeof body.to !== 'string' || typeof body.message !== 'string') {
    reply(response, 422, { error: { code: 'validation_error', message: 'to and message are required' } });
    return;
  }
  const id = newId('msg');
  await store({ id, to: body.to, text: body.message, createdAt: new Date() });
  reply(response, 202, {
    message: id,
    status: 'queued',
    to: body.to,
    request: `req_${randomUUID().replaceAll('-', '')}`,
  });
}

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/health') {
    reply(response, 200, { status: 'ok' });
    return;
  }
  if (request.method !== 'POST' || request.url !== '/v1/messages/send') {
    reply(response, 404, { error: { code: 'not_found', message: 'The baseline only sends' } });
    return;
  }
  send(request, response).catch((error: unknown) => {
    process.stderr.write(`baseline: ${error instanceof Error ? error.message : String(error)}\n`);
    if (!response.headersSent)
      reply(response, 500, { error: { code: 'internal_error', message: 'The send failed' } });
  });
});

await queues.messageSend.waitUntilReady();
await pool.query('SELECT 1');
server.listen(Number(env.PORT ?? 3000), env.HOST ?? '127.0.0.1');

process.once('SIGTERM', () => {
  server.close();
  void Promise.allSettled([pool.end(), closeQueues(queues).then(() => redis.quit())]).then(() =>
    process.exit(0),
  );
});
