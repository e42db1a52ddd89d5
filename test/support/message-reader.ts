import type { TestAccount, TestTern } from './tern.js';
import { waitFor } from './wait.js';

/**
 * A message as its account reads it over /v1, and polls for the states tests wait on. `who` is
 * read at each call: test files set their Tern and account in `beforeAll`.
 */
export function messageReader(who: () => { tern: TestTern; account: TestAccount }) {
  const message = async (id: string) => {
    const { tern, account } = who();
    return (await tern.request('GET', `/v1/messages/${id}`, { token: account.token })).body;
  };
  return {
    message,
    /** The message once it has `status`. */
    reaches: (id: string, status: string, timeoutMs = 10_000) =>
      waitFor(async () => {
        const body = await message(id);
        return body.status === status ? body : null;
      }, timeoutMs),
    /** The message once a carrier took it (which may go on to deliver or fail it). */
    handedOver: (id: string) =>
      waitFor(async () => {
        const body = await message(id);
        return body.carrier && body.status !== 'queued' ? body : null;
      }),
  };
}
