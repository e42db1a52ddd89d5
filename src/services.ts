import type { Dependencies } from './deps.js';
import { AccountService } from './modules/accounts/accounts.service.js';
import { LoginGuard } from './modules/accounts/login-guard.js';
import { TokenService } from './modules/accounts/tokens.js';
import { CampaignService } from './modules/campaigns/campaigns.service.js';
import { ContactService } from './modules/contacts/contacts.service.js';
import { ImportService } from './modules/imports/imports.service.js';
import { MessagePages } from './modules/messages/message-pages.js';
import { MessageService } from './modules/messages/messages.service.js';
import { OptOutService } from './modules/opt-outs/opt-outs.service.js';
import { SettingsService } from './modules/settings/settings.service.js';
import { TemplateService } from './modules/templates/templates.service.js';
import { WebhookDeliveries } from './modules/webhooks/webhook-deliveries.js';
import { WebhookSecrets } from './modules/webhooks/webhook-secrets.js';
import { WebhookSender } from './modules/webhooks/webhook-sender.js';
import { WebhookService } from './modules/webhooks/webhooks.service.js';

/** The domain layer: every rule of the service lives behind these, shared by GraphQL, /v1 and the workers. */
export interface Services {
  tokens: TokenService;
  accounts: AccountService;
  settings: SettingsService;
  messages: MessageService;
  /** Messages listed under another row (a campaign's, a message's replies). */
  messagePages: MessagePages;
  optOuts: OptOutService;
  campaigns: CampaignService;
  contacts: ContactService;
  imports: ImportService;
  templates: TemplateService;
  webhooks: WebhookService;
  webhookDeliveries: WebhookDeliveries;
}

export function createServices(deps: Dependencies): Services {
  const tokens = new TokenService(deps.config.jwtSecret, deps.clock);
  const optOuts = new OptOutService(deps.prisma);
  const messages = new MessageService(deps.prisma, deps.clock, deps.queues, deps.logger.child({ module: 'messages' }), optOuts);
  const webhookSecrets = new WebhookSecrets(deps.prisma, deps.config.webhookSecretKey);
  const webhookSender = new WebhookSender({
    timeoutMs: deps.config.webhookTimeoutMs,
    allowPrivateNetworks: deps.config.webhookAllowPrivateNetworks,
    allowInsecure: deps.config.webhookAllowInsecure,
  });
  const webhookDeliveries = new WebhookDeliveries(
    deps.prisma,
    deps.clock,
    deps.queues,
    webhookSecrets,
    webhookSender,
    deps.logger.child({ module: 'webhooks' }),
    deps.config.webhookRetryBaseMs,
  );
  return {
    tokens,
    accounts: new AccountService(deps.prisma, tokens, new LoginGuard(deps.redis, deps.config.redisPrefix)),
    settings: new SettingsService(deps.prisma),
    messages,
    messagePages: new MessagePages(deps.prisma),
    optOuts,
    campaigns: new CampaignService(
      deps.prisma,
      deps.clock,
      deps.queues,
      messages,
      deps.logger.child({ module: 'campaigns' }),
      deps.config.webhookAllowInsecure,
    ),
    contacts: new ContactService(deps.prisma, deps.clock),
    imports: new ImportService(deps.prisma, deps.pool, deps.clock, deps.queues, deps.logger.child({ module: 'imports' }), deps.config.importDir, {
      maxInflatedBytes: deps.config.importMaxInflatedBytes,
    }),
    templates: new TemplateService(deps.prisma, deps.clock),
    webhooks: new WebhookService(deps.prisma, deps.clock, webhookSecrets, webhookSender, webhookDeliveries, deps.config.webhookAllowInsecure),
    webhookDeliveries,
  };
}
