import { createAndroidProvider } from './android.js';
import { createGenericProvider } from './generic.js';
import type { HttpProvider, ProviderSettings } from './http-provider.js';
import { createInfobipProvider } from './infobip.js';
import { createTwilioProvider } from './twilio.js';
import { createVonageProvider } from './vonage.js';

/** What Tern knows of one kind of HTTP provider, by the scheme of its carrier URL. */
export interface HttpProviderKind {
  /**
   * Makes the provider; throws AppError('validation_error') naming what is wrong with the URL or
   * template, which is how `carriers add` checks them.
   */
  create(settings: ProviderSettings, template: string | null): HttpProvider;
  /** Which part of the URL is the secret sealed at rest: the password, or the user (an API key). */
  secretIn: 'password' | 'username';
  /**
   * Query options of its URL that are secrets too (Vonage's `signature_secret`): taken out of the
   * stored URL, sealed with the password, and given back in ProviderSettings.secretOptions.
   */
  secretOptions: readonly string[];
  /** True when its callbacks carry Tern's per-carrier secret as the last path segment (nothing signed). */
  secretInPath: boolean;
  /** True when it calls Tern back (reports, replies): PUBLIC_URL must then be set. */
  callsBack: boolean;
  /** True for the kinds configured by a template file (`--template`), which is then required. */
  template: boolean;
}

/**
 * Every HTTP provider Tern speaks, by URL scheme. A new provider is one file and one line here;
 * nothing outside src/carriers knows these kinds.
 */
export const HTTP_PROVIDERS: Readonly<Record<string, HttpProviderKind>> = {
  twilio: {
    create: createTwilioProvider,
    secretIn: 'password',
    secretOptions: [],
    secretInPath: false,
    callsBack: true,
    template: false,
  },
  http: {
    create: createGenericProvider,
    secretIn: 'password',
    secretOptions: [],
    secretInPath: true,
    callsBack: true,
    template: true,
  },
  https: {
    create: createGenericProvider,
    secretIn: 'password',
    secretOptions: [],
    secretInPath: true,
    callsBack: true,
    template: true,
  },
  vonage: {
    create: createVonageProvider,
    secretIn: 'password',
    secretOptions: ['signature_secret'],
    secretInPath: false,
    callsBack: true,
    template: false,
  },
  infobip: {
    create: createInfobipProvider,
    secretIn: 'username',
    secretOptions: [],
    secretInPath: true,
    callsBack: true,
    template: false,
  },
  android: {
    create: createAndroidProvider,
    secretIn: 'password',
    secretOptions: [],
    secretInPath: false,
    callsBack: true,
    template: false,
  },
};

/** The provider kind of a URL scheme (without its colon), or null when it is not an HTTP carrier. */
export function httpProviderKind(scheme: string): HttpProviderKind | null {
  return Object.hasOwn(HTTP_PROVIDERS, scheme) ? HTTP_PROVIDERS[scheme]! : null;
}
