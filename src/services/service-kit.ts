import type { Logger } from 'pino';

export type ModuleLogger = (module: string) => Logger;

// How often every process reads the carriers and routes (and the countries' sender rules) again:
// a bound on how late a change applies.
export const CARRIER_SETTINGS_POLL_MS = 1_000;
