/**
 * A client of Tern's GraphQL API from outside its repository, with the typed client
 * (`@tern/client`): log in, send one SMS, list the latest messages. Run it against a live Tern:
 *   npm install --install-links && npx tsc &&
 *   TERN_URL=http://127.0.0.1:3000/graphql TERN_EMAIL=… TERN_PASSWORD=… node out/send.js
 */
import {
  LoginDocument,
  MessagesDocument,
  SendMessageDocument,
  TernClient,
  verifyWebhook,
  type WebhookHeaders,
} from '@tern/client';

const url = process.env.TERN_URL ?? 'http://127.0.0.1:3000/graphql';
const to = process.env.TERN_TO ?? '5511999990000';

const { login } = await new TernClient({ url }).request(LoginDocument, {
  input: { email: process.env.TERN_EMAIL ?? '', password: process.env.TERN_PASSWORD ?? '' },
});
// Each result is a union of the success type and the expected errors: `__typename` narrows it.
if (login.__typename !== 'Token') throw new Error(`login refused: ${login.error_code}`);

const client = new TernClient({ url, token: login.token });
const { send_message: sent } = await client.request(SendMessageDocument, {
  input: { to, message: 'Hello from the typed client' },
});
// A bad field, or the fraud guard (the rule on `to`): both name what was refused in error_details.
if (sent.__typename === 'ValidationError' || sent.__typename === 'FraudBlockedError') {
  throw new Error(`refused: ${sent.error_details.map((d) => `${d.field} ${d.issue}`).join(', ')}`);
}
if (sent.__typename === 'QuotaExceededError') {
  throw new Error(`over the account's quota: try again in ${sent.error_retry_after} s`);
}

const { messages } = await client.request(MessagesDocument, { to, perPage: 5 });
if (messages.__typename !== 'MessagePage') throw new Error(messages.error_message);

console.log(
  JSON.stringify({
    sent: { message: sent.message, status: sent.status },
    listed: messages.data.map((message) => ({ message: message.message, status: message.status })),
    total: messages.total,
  }),
);

/** A webhook receiver's check of a callback, before trusting its body. */
export function readCallback(secret: string, headers: WebhookHeaders, rawBody: string) {
  const verified = verifyWebhook(secret, headers, rawBody);
  if (!verified.ok) throw new Error(`not a genuine callback: ${verified.reason}`);
  return verified.event;
}

/** Mistakes the types catch before anything runs; tsc fails if any of them compiles. */
export async function mistakes() {
  // @ts-expect-error: a send without `to`
  await client.request(SendMessageDocument, { input: { message: 'to nobody' } });
  // @ts-expect-error: a misspelt field (`mesage`)
  await client.request(SendMessageDocument, { input: { to, mesage: 'typo' } });
  // @ts-expect-error: a status that does not exist
  await client.request(MessagesDocument, { status: 'delivred' });
}
