import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { REDIS_URL } from './support/server-url.js';
import { deleteRedisKeys } from './support/tern.js';
import {
  apiRequest,
  type ChildHandle,
  createAccountWithCli,
  freePort,
  killAll,
  logIn,
  NPM_START_HEAP_FLAGS,
  startTernProcess,
  transcripts,
} from './support/tern-processes.js';

// One tenant turns live updates against a Tern process run as `npm start` runs it (API and
// workers in one process, with its heap limits): 20 streams, each re-running a costly selection
// at every change of the tenant's messages, while it sends. Another tenant must still be
// answered, request after request, for the whole attack, and the process must survive it. How
// much slower its answers are is a figure for the bench, not a bound for a test.

const JWT_SECRET = 'live-hostile-tenant-secret-of-at-least-32-bytes';
const STREAMS = 20;
const SENDS = 50;

interface Instance {
  base: string;
  process: ChildHandle;
  env: Record<string, string>;
  database: TestDatabase;
}

let attacked: Instance;
let attacker: string;
let victim: string;

async function startInstance(): Promise<Instance> {
  const database = await createTestDatabase();
  const port = await freePort();
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX: `tern_live_hostile_${randomBytes(4).toString('hex')}`,
    JWT_SECRET,
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    PORT: String(port),
    SIMULATOR_DELAY_MS: '20',
  };
  const process = await startTernProcess('all', env, NPM_START_HEAP_FLAGS);
  return { base: `http://127.0.0.1:${port}`, process, env, database };
}

beforeAll(async () => {
  attacked = await startInstance();
  [attacker, victim] = await Promise.all([
    logIn(attacked.base, await createAccountWithCli(attacked.env)),
    logIn(attacked.base, await createAccountWithCli(attacked.env)),
  ]);
}, 120_000);

afterAll(async () => {
  await killAll();
  await attacked?.database.drop();
  if (attacked) await deleteRedisKeys(attacked.env.REDIS_PREFIX!);
});

/** The other tenant reading its settings, one request after another, until `done` settles: how many were answered. */
async function victimRequestsUntil(done: Promise<unknown>): Promise<number> {
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => undefined);
  let answered = 0;
  while (!finished) {
    const answer = await apiRequest(attacked.base, 'GET', '/v1/settings', undefined, victim);
    expect(answer.status, transcripts()).toBe(200);
    answered += 1;
  }
  return answered;
}

interface Stream {
  status: number;
  body: string;
  close(): void;
}

/** An attacker's stream, read as fast as it comes so that nothing waits on the client. */
async function openStream(selection: string): Promise<Stream> {
  const abort = new AbortController();
  const response = await fetch(`${attacked.base}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${attacker}`,
    },
    body: JSON.stringify({ query: `subscription { messageUpdated { ${selection} } }` }),
    signal: abort.signal,
  });
  const stream = { status: response.status, body: '', close: () => abort.abort() };
  if (response.status !== 200) {
    stream.body = await response.text();
    return stream;
  }
  void response.body!.pipeTo(new WritableStream({ write: () => undefined })).catch(() => undefined);
  return stream;
}

const aliases = (count: number, selection: string) =>
  Array.from({ length: count }, (_, index) => `a${index}: ${selection}`).join(' ');

describe('live updates turned against the other tenants', () => {
  it('leave another tenant answered throughout, the costliest selection refused before it runs', {
    timeout: 120_000,
  }, async () => {
    // The selection that made a process spend 114 s of CPU over 50 sends: refused outright.
    const refused = await Promise.all(
      Array.from({ length: STREAMS }, () =>
        openStream(aliases(30, 'message { id replies(perPage: 100) { id } }')),
      ),
    );
    for (const stream of refused) {
      expect(stream.status).toBe(400);
      expect(stream.body).toContain('"code":"QUERY_TOO_LARGE"');
    }

    // The same attack cut down to what one update may cost: large pages, or many small ones.
    const streams = await Promise.all(
      Array.from({ length: STREAMS }, (_, index) =>
        openStream(
          index % 2 === 0
            ? aliases(3, 'message { id replies(perPage: 100) { id } }')
            : aliases(9, 'message { id replies(perPage: 1) { id } }'),
        ),
      ),
    );
    expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));
    let answered: number;
    try {
      const sending = (async () => {
        for (let i = 0; i < SENDS; i++) {
          const sent = await apiRequest(
            attacked.base,
            'POST',
            '/v1/messages/send',
            { to: `55119999${2000 + i}`, message: `Update ${i}` },
            attacker,
          );
          expect(sent.status).toBe(202);
        }
      })();
      answered = await victimRequestsUntil(sending);
      await sending;
    } finally {
      for (const stream of streams) stream.close();
    }
    expect(answered).toBeGreaterThan(0);
    expect(attacked.process.child.exitCode, transcripts()).toBeNull();
  });
});
