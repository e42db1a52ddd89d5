import type { Dependencies } from './deps.js';
import { AccountService } from './modules/accounts/accounts.service.js';
import { TokenService } from './modules/accounts/tokens.js';
import { CampaignService } from './modules/campaigns/campaigns.service.js';
import { ContactService } from './modules/contacts/contacts.service.js';
import { MessageService } from './modules/messages/messages.service.js';
import { SettingsService } from './modules/settings/settings.service.js';
import { TemplateService } from './modules/templates/templates.service.js';

/** The domain layer: every rule of the service lives behind these, shared by GraphQL, /v1 and the workers. */
export interface Services {
  tokens: TokenService;
  accounts: AccountService;
  settings: SettingsService;
  messages: MessageService;
  campaigns: CampaignService;
  contacts: ContactService;
  templates: TemplateService;
}

export function createServices(deps: Dependencies): Services {
  const tokens = new TokenService(deps.config.jwtSecret, deps.clock);
  const messages = new MessageService(deps.prisma, deps.clock, deps.queues, deps.logger.child({ module: 'messages' }));
  return {
    tokens,
    accounts: new AccountService(deps.prisma, tokens),
    settings: new SettingsService(deps.prisma),
    messages,
    campaigns: new CampaignService(
      deps.prisma,
      deps.clock,
      deps.queues,
      messages,
      deps.logger.child({ module: 'campaigns' }),
      deps.config.webhookAllowInsecure,
    ),
    contacts: new ContactService(deps.prisma, deps.clock),
    templates: new TemplateService(deps.prisma, deps.clock),
  };
}
