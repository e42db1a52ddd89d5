import { afterAll, describe, expect, it } from 'vitest';
import { sql } from './support/database.js';
import { startTern, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

// An API process, and a worker that is stopped and replaced by a new one while 10,000 campaign
// messages wait for their window: nothing of the schedule lives in the process or in Redis.

const CONTACTS = 10_000;
const running: TestTern[] = [];

afterAll(async () => {
  for (const tern of running.reverse()) await tern.stop();
});

async function statusCounts(tern: TestTern, campaign: string): Promise<Record<string, number>> {
  const { rows } = await sql(
    tern.database.url,
    'SELECT status::text AS status, count(*)::int AS n FROM messages WHERE campaign_id = $1 GROUP BY status',
    [campaign],
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

describe('scheduled messages across a restart', () => {
  it('keeps 10,000 waiting messages through a worker restart, sends none early and every one once', {
    timeout: 240_000,
  }, async () => {
    const api = await startTern({ role: 'api' });
    running.push(api);
    const firstWorker = await startTern({ role: 'worker', sharing: api, env: { SIMULATOR_DELAY_MS: '0' } });
    const account = await api.createAccount();
    const call = (method: string, path: string, body?: unknown) =>
      api.request(method, path, { token: account.token, body });

    // A window that opens at the next whole minute after the next hour, every day, in UTC.
    const now = api.clock.now();
    const opening = new Date(Math.ceil(now.getTime() / 60_000) * 60_000 + 60 * 60_000);
    const clock = (at: Date) => at.toISOString().slice(11, 16);
    const template = await call('POST', '/v1/templates', { name: 'Restart', content: 'Hi {{name}}' });
    const campaign = (
      await call('POST', '/v1/campaigns', {
        name: 'Restart',
        template: template.body.template,
        batch_size: 1000,
        send_window: {
          days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
          start: clock(opening),
          end: clock(new Date(opening.getTime() + 6 * 60 * 60_000)),
        },
      })
    ).body.campaign as string;
    // Numbers ending in 7: the simulator delivers them all (0001 would fail, 0002 reply).
    const phones = Array.from({ length: CONTACTS }, (_, i) => `5511${String(i).padStart(8, '0')}7`);
    const csv = `phone,name\n${phones.map((phone, i) => `${phone},C${i}`).join('\n')}\n`;
    const form = new FormData();
    form.append('phone_column', 'phone');
    form.append('name_column', 'name');
    form.append('file', new Blob([csv]), 'contacts.csv');
    const upload = await fetch(`${api.url}/v1/campaigns/${campaign}/contacts/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.token}` },
      body: form,
    });
    const job = ((await upload.json()) as { job: string }).job;
    await waitFor(async () => {
      const read = await call('GET', `/v1/campaigns/${campaign}/contacts/import/${job}`);
      return read.body.status === 'completed' ? true : null;
    }, 60_000);
    await call('POST', `/v1/campaigns/${campaign}/start`);
    await waitFor(async () => {
      const read = await call('GET', `/v1/campaigns/${campaign}`);
      return read.body.status === 'finished' && read.body.stats.waiting === CONTACTS ? true : null;
    }, 60_000);

    await firstWorker.stop();
    const secondWorker = await startTern({ role: 'worker', sharing: api, env: { SIMULATOR_DELAY_MS: '0' } });
    running.push(secondWorker);
    secondWorker.clock.advance(opening.getTime() - 5_000 - secondWorker.clock.now().getTime());
    // A round of the new worker's release loop at its clock, five seconds before the window opens.
    await secondWorker.tern.services.scheduledReleases.releaseDue();
    expect(await statusCounts(api, campaign)).toEqual({ scheduled: CONTACTS });

    secondWorker.clock.advance(10_000);
    const done = await waitFor(
      async () => {
        const counts = await statusCounts(api, campaign);
        return counts.delivered === CONTACTS ? counts : null;
      },
      150_000,
      500,
    );
    expect(done).toEqual({ delivered: CONTACTS });
    const { rows } = await sql(
      api.database.url,
      `SELECT count(*)::int AS early FROM messages WHERE campaign_id = $1 AND sent_at < $2`,
      [campaign, opening],
    );
    expect(rows[0].early).toBe(0);
  });
});
