import { parseCountryCaps } from '../config/fraud-guard.js';
import { isKnownCountry } from '../lib/phone.js';
import { MAX_DECISION_ROWS } from '../modules/fraud-guard/fraud-guard.js';
import type { Services } from '../services.js';
import { accountOf, type Command, print, UsageError, type Values } from './command-kit.js';

// `accounts guard`: the fraud guard's rules of an account, its blocked countries and its decisions.

/** `N` or `default` (back to the deployment's setting). */
function limitOf(text: string, option: string): number | null {
  if (text === 'default') return null;
  if (!/^[0-9]{1,6}$/.test(text)) throw new UsageError(`--${option} takes a whole number or default`);
  return Number(text);
}

/** `--flood N/M`: N identical texts and M texts of any kind to one number per hour. */
function floodOf(text: string): { floodIdentical: number | null; floodAny: number | null } {
  const [identical, any, ...rest] = text.split('/');
  if (identical === undefined || any === undefined || rest.length > 0)
    throw new UsageError('--flood takes IDENTICAL/ANY, e.g. 6/20 (default/default for the deployment’s)');
  return { floodIdentical: limitOf(identical, 'flood'), floodAny: limitOf(any, 'flood') };
}

function changesOf(values: Values): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  if (typeof values.flood === 'string') Object.assign(changes, floodOf(values.flood));
  if (typeof values.velocity === 'string') changes.velocity = limitOf(values.velocity, 'velocity');
  if (typeof values['cool-off'] === 'string')
    changes.coolOffSeconds = limitOf(values['cool-off'], 'cool-off');
  if (typeof values.mode === 'string') {
    if (values.mode !== 'block' && values.mode !== 'monitor' && values.mode !== 'default')
      throw new UsageError('--mode takes block, monitor or default');
    changes.mode = values.mode === 'default' ? null : values.mode;
  }
  if (typeof values['country-cap'] === 'string') {
    try {
      changes.countryCaps = parseCountryCaps(values['country-cap']);
    } catch (error) {
      throw new UsageError(`--country-cap: ${(error as Error).message}`);
    }
  }
  return changes;
}

async function guardCommand(services: Services, values: Values): Promise<void> {
  const unblock = typeof values.unblock === 'string' ? values.unblock.toUpperCase() : null;
  if (unblock !== null && !isKnownCountry(unblock))
    throw new UsageError('--unblock takes an ISO 3166 alpha-2 country code, e.g. GB');
  const changes = changesOf(values);
  const account = await accountOf(services, values);
  const guard = services.fraudGuard;
  await services.fraudGuard.setRules(account, changes);
  const unblocked =
    unblock === null
      ? {}
      : { unblocked: unblock, was_blocked: await guard.windows.unblock(account, unblock) };
  const { rules, blocked, decisions, decisionsTruncated } = await guard.view(account);
  print({
    account,
    email: values.email,
    mode: rules.mode,
    flood_identical: rules.floodIdentical,
    flood_any: rules.floodAny,
    velocity: rules.velocity,
    country_caps: rules.countryCaps,
    cool_off_seconds: rules.coolOffSeconds,
    blocked,
    ...unblocked,
    decisions,
    decisions_truncated: decisionsTruncated,
  });
}

export const GUARD_COMMAND: Command = {
  summary: "set and show an account's fraud guard rules; lift a country's block",
  synopsis:
    '--email EMAIL [--flood N/M] [--velocity N] [--country-cap CC=H/D,…] [--cool-off SECONDS] [--mode block|monitor] [--unblock CC]',
  options: {
    email: { type: 'string' },
    flood: { type: 'string' },
    velocity: { type: 'string' },
    'country-cap': { type: 'string' },
    'cool-off': { type: 'string' },
    mode: { type: 'string' },
    unblock: { type: 'string' },
  },
  required: ['email'],
  details: [
    '--flood N/M: N identical texts and M texts in all to one number per rolling hour; --velocity N:',
    'texts to one number range (the number less its last 4 digits) per rolling hour; --country-cap',
    'CC=H/D: at most H texts an hour and D a day to the country (GB=100/1000; GB=/1000 a day only; GB=/',
    'removes the account’s caps of GB), several separated by commas; a country over a cap is blocked',
    'for --cool-off seconds and an account.country_blocked event is sent. 0 turns a limit off,',
    'default returns to the deployment’s setting (FRAUD_*). --mode monitor sends every message and',
    'records what would have been refused. --unblock CC lifts the block and clears the country’s counts.',
    'Prints {"account","email","mode","flood_identical","flood_any","velocity","country_caps",',
    '"cool_off_seconds","blocked","decisions","decisions_truncated"}: blocked countries with the end of',
    'their block, and the last 7 days of decisions by day, rule, country and decision (blocked or',
    `monitored), newest day first; decisions_truncated: the oldest left out past ${MAX_DECISION_ROWS} rows.`,
  ].join('\n'),
  run: guardCommand,
};
