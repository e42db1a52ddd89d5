import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';

export * from './generated/graphql.js';
export {
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  type WebhookEvent,
  type WebhookHeaders,
  type WebhookVerification,
} from './verify-webhook.js';

export class TernClientError extends Error {
  constructor(
    readonly status: number,
    readonly errors: { message: string; extensions?: { code?: string } }[],
  ) {
    super(errors.map((error) => error.message).join('; ') || `HTTP ${status}`);
  }

  get code(): string | undefined {
    return this.errors[0]?.extensions?.code;
  }
}

/**
 * A minimal typed client for Tern's GraphQL API: pass one of the generated documents and get
 * its typed result. Errors of the request itself (auth, rate limits) throw TernClientError.
 */
export class TernClient {
  constructor(private readonly options: { url: string; token?: string; fetch?: typeof fetch }) {}

  async request<Result, Variables>(
    document: TypedDocumentNode<Result, Variables>,
    variables: Variables,
  ): Promise<Result> {
    const response = await (this.options.fetch ?? fetch)(this.options.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
      },
      body: JSON.stringify({ query: print(document), variables }),
    });
    const body = (await response.json()) as { data?: Result; errors?: TernClientError['errors'] };
    if (body.errors?.length || !body.data) throw new TernClientError(response.status, body.errors ?? []);
    return body.data;
  }
}
