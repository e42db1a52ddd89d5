import type { TypedDocumentString } from './generated/graphql';

/**
 * The public GraphQL API, as any integrator's page would call it: one fetch per operation, each
 * a document generated from src/dashboard/operations.graphql, typed by the schema.
 */

export interface GraphQLAnswer<Data> {
  data?: Data;
  errors?: { message: string }[];
}

export class SignedOut extends Error {}

export async function graphql<Data, Variables>(
  token: string | null,
  document: TypedDocumentString<Data, Variables>,
  variables: Variables,
): Promise<Data> {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query: document.toString(), variables }),
  });
  if (response.status === 401) throw new SignedOut('Signed out: sign in again');
  const answer = (await response.json()) as GraphQLAnswer<Data>;
  if (answer.errors?.length) throw new Error(answer.errors.map((error) => error.message).join('; '));
  if (!answer.data) throw new Error(`The API answered ${response.status}`);
  return answer.data;
}

/** A result union's success member, or the error member's message thrown. */
export function success<Result extends { __typename: string }, Name extends Result['__typename']>(
  result: Result,
  name: Name,
): Extract<Result, { __typename: Name }> {
  if (result.__typename === name) return result as Extract<Result, { __typename: Name }>;
  throw new Error('message' in result ? String(result.message) : `The API answered ${result.__typename}`);
}

/**
 * A subscription over server-sent events. EventSource cannot send the Authorization header, so
 * the stream is read from fetch; it is opened again a few seconds after it ends.
 */
export function subscribe<Data>(
  token: string,
  document: TypedDocumentString<Data, Record<string, never>>,
  onData: (data: Data) => void,
): () => void {
  const abort = new AbortController();
  const run = async () => {
    while (!abort.signal.aborted) {
      await readStream(token, document.toString(), onData, abort.signal).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
  };
  void run();
  return () => abort.abort();
}

async function readStream<Data>(
  token: string,
  query: string,
  onData: (data: Data) => void,
  signal: AbortSignal,
): Promise<void> {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query }),
    signal,
  });
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) return;
    buffered += chunk.value;
    let end = buffered.indexOf('\n\n');
    while (end >= 0) {
      const data = dataOf(buffered.slice(0, end));
      buffered = buffered.slice(end + 2);
      if (data) onData(data as Data);
      end = buffered.indexOf('\n\n');
    }
  }
}

function dataOf(block: string): unknown {
  const data = block
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .join('');
  if (!data) return null;
  const parsed = JSON.parse(data) as GraphQLAnswer<unknown>;
  return parsed.data ?? null;
}
