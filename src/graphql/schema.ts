import type { GraphQLSchema } from 'graphql';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Services } from '../services.js';
import { createBuilder } from './builder.js';
import type { FieldRateLimits } from './field-rate-limits.js';
import { addAccountTypes } from './types/accounts.js';
import { addApiKeyTypes } from './types/api-keys.js';
import { addCampaignTypes } from './types/campaigns.js';
import { addCommonTypes } from './types/common.js';
import { addImportTypes } from './types/imports.js';
import { addMessageTypes } from './types/messages.js';
import { addOptOutTypes } from './types/opt-outs.js';
import { addSettingsTypes } from './types/settings.js';
import { addTemplateTypes } from './types/templates.js';
import { addWebhookTypes } from './types/webhooks.js';

export interface SchemaOptions {
  strictQueries: boolean;
  fieldRateLimits: FieldRateLimits;
}

export function createSchema(services: Services, prisma: PrismaClient, options: SchemaOptions): GraphQLSchema {
  const builder = createBuilder({ prisma, strictQueries: options.strictQueries });
  addCommonTypes(builder);
  addAccountTypes(builder, services, options.fieldRateLimits);
  addSettingsTypes(builder, services);
  addApiKeyTypes(builder, services);
  const messageTypes = addMessageTypes(builder, services, options.fieldRateLimits);
  addCampaignTypes(builder, services, messageTypes);
  addTemplateTypes(builder, services);
  addWebhookTypes(builder, services);
  addImportTypes(builder, services);
  addOptOutTypes(builder, services);
  return builder.toSchema({ sortSchema: true });
}
