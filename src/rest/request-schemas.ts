import { z } from 'zod';
import { systemClock } from '../clock.js';
import { loginInput } from '../modules/accounts/accounts.service.js';
import { codeInput } from '../modules/accounts/two-factor.js';
import { apiKeyCreateInput } from '../modules/api-keys/api-keys.service.js';
import { campaignInputs } from '../modules/campaigns/campaign-records.js';
import { addContactInput } from '../modules/contacts/contacts.service.js';
import { importInput } from '../modules/imports/import-options.js';
import { messageListInput, previewInput } from '../modules/messages/message-queries.js';
import { idempotencyKey, sendInput } from '../modules/messages/message-sending.js';
import { updateSettingsInput } from '../modules/settings/settings.service.js';
import { createTemplateInput, updateTemplateInput } from '../modules/templates/templates.service.js';
import { replayInput, webhookInputs } from '../modules/webhooks/webhooks.service.js';
import { pageInput } from '../pagination.js';
import { snakeCase } from './rest-routes.js';

export type JsonSchema = Record<string, unknown>;

export interface RequestSchemas {
  /** GraphQL input type name → the zod schema its service parses it with. */
  bodies: Map<string, z.ZodType>;
  /** Query variable → its zod schema, per operation (`*` for every operation). */
  queries: Record<string, Record<string, z.ZodType>>;
  /** Header variable → its zod schema. */
  headers: Record<string, z.ZodType>;
}

/**
 * The zod schemas the services validate /v1 input with, by the GraphQL input type that carries
 * each: the OpenAPI document is written from them, so it says what the service enforces.
 */
export function requestSchemas(allowInsecureWebhooks: boolean): RequestSchemas {
  const campaign = campaignInputs(allowInsecureWebhooks);
  const webhook = webhookInputs(allowInsecureWebhooks);
  const bodies = new Map<string, z.ZodType>([
    ['LoginInput', loginInput],
    ['TwoFactorCodeInput', codeInput],
    ['UpdateSettingsInput', updateSettingsInput],
    ['CreateApiKeyInput', apiKeyCreateInput(systemClock)],
    ['CreateCampaignInput', campaign.create],
    ['UpdateCampaignInput', campaign.update],
    ['AddContactInput', addContactInput],
    ['ImportContactsInput', importInput],
    ['SendMessageInput', sendInput],
    ['PreviewMessageInput', previewInput],
    ['CreateTemplateInput', createTemplateInput],
    ['UpdateTemplateInput', updateTemplateInput],
    ['RegisterWebhookInput', webhook.register],
    ['UpdateWebhookInput', webhook.update],
    ['ReplayWebhookInput', replayInput],
  ]);
  return {
    bodies,
    queries: { '*': pageInput.shape, Messages: messageListInput.shape },
    headers: { idempotencyKey },
  };
}

/** A zod schema as the JSON Schema of what a client sends, with /v1 (snake_case) property names. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
  }) as JsonSchema;
  return snakeProperties(json);
}

function snakeProperties(schema: JsonSchema): JsonSchema {
  const result: JsonSchema = { ...schema };
  if (schema.properties && typeof schema.properties === 'object') {
    result.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, JsonSchema>).map(([key, inner]) => [
        snakeCase(key),
        snakeProperties(inner),
      ]),
    );
  }
  if (Array.isArray(schema.required)) result.required = (schema.required as string[]).map(snakeCase);
  for (const key of ['items', 'anyOf', 'oneOf', 'allOf'] as const) {
    const inner = schema[key];
    if (Array.isArray(inner)) result[key] = inner.map((item) => snakeProperties(item as JsonSchema));
    else if (inner && typeof inner === 'object') result[key] = snakeProperties(inner as JsonSchema);
  }
  return result;
}
