import type { Dependencies } from './deps.js';
import { AccountService } from './modules/accounts/accounts.service.js';
import { TokenService } from './modules/accounts/tokens.js';
import { MessageService } from './modules/messages/messages.service.js';
import { SettingsService } from './modules/settings/settings.service.js';

/** The domain layer: every rule of the service lives behind these, shared by GraphQL, /v1 and the workers. */
export interface Services {
  tokens: TokenService;
  accounts: AccountService;
  settings: SettingsService;
  messages: MessageService;
}

export function createServices(deps: Dependencies): Services {
  const tokens = new TokenService(deps.config.jwtSecret, deps.clock);
  return {
    tokens,
    accounts: new AccountService(deps.prisma, tokens),
    settings: new SettingsService(deps.prisma),
    messages: new MessageService(deps.prisma, deps.clock, deps.queues, deps.logger.child({ module: 'messages' })),
  };
}
