import type { GraphQLSchema } from 'graphql';
import { createBuilder } from './builder.js';
import { addAccountTypes } from './types/accounts.js';
import { addApiKeyTypes } from './types/api-keys.js';
import { addCampaignTypes } from './types/campaigns.js';
import { addCommonTypes, addRootTypes } from './types/common.js';
import { addContactTypes } from './types/contacts.js';
import { addFraudGuardTypes } from './types/fraud-guard.js';
import { addImportTypes } from './types/imports.js';
import { addLiveTypes } from './types/live.js';
import { addMessageTypes } from './types/messages.js';
import { addOptOutTypes } from './types/opt-outs.js';
import { addSendWindowTypes } from './types/send-window.js';
import { addSettingsTypes } from './types/settings.js';
import { addStatsTypes } from './types/stats.js';
import { addTemplateTypes } from './types/templates.js';
import { addVerificationTypes } from './types/verifications.js';
import { addWebhookTypes } from './types/webhooks.js';

/** What the inputs' rules depend on; the printed schema is the same whatever they are. */
export interface InputOptions {
  allowInsecureWebhooks: boolean;
}

export interface SchemaOptions {
  strictQueries: boolean;
  /** The rules the OpenAPI document reads back from the input types; strict when left out. */
  inputs?: InputOptions;
}

/** The code-first schema. Resolvers find the domain layer in the request's context, so building it connects to nothing. */
export function createSchema(options: SchemaOptions): GraphQLSchema {
  const builder = createBuilder({ strictQueries: options.strictQueries });
  const inputs = options.inputs ?? { allowInsecureWebhooks: false };
  addRootTypes(builder);
  const commonTypes = addCommonTypes(builder);
  addAccountTypes(builder);
  const windows = addSendWindowTypes(builder);
  addSettingsTypes(builder, windows);
  addApiKeyTypes(builder);
  const messageTypes = addMessageTypes(builder);
  addCampaignTypes(builder, { messages: messageTypes, contacts: addContactTypes(builder), windows }, inputs);
  addTemplateTypes(builder);
  addVerificationTypes(builder);
  addWebhookTypes(builder, inputs);
  addImportTypes(builder, commonTypes);
  addOptOutTypes(builder);
  addStatsTypes(builder);
  addFraudGuardTypes(builder);
  addLiveTypes(builder, messageTypes);
  return builder.toSchema({ sortSchema: true });
}
