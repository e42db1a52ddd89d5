import { isKnownCountry } from '../lib/phone.js';
import type { CountrySenderRule } from '../modules/senders/country-sender-rules.js';
import type { Services } from '../services.js';
import { type Group, print, UsageError, type Values } from './command-kit.js';

// The operator's commands for the countries' sender rules, and the sender `routes explain` tells.

function printRule(rule: CountrySenderRule): void {
  print({ country: rule.country, alphanumeric: rule.alphanumeric, numeric_replaced: rule.numericReplaced });
}

const ALPHANUMERIC = ['allowed', 'replaced', 'refused', 'required'];

export const SENDER_GROUPS: Record<string, Group> = {
  countries: {
    summary: 'list and change what each destination country lets a sender be',
    commands: {
      senders: {
        summary: 'list the countries’ sender rules, or set one country’s',
        synopsis:
          '(--list | --country CC [--alphanumeric allowed|replaced|refused|required] [--numeric-replaced yes|no])',
        options: {
          list: { type: 'boolean' },
          country: { type: 'string' },
          alphanumeric: { type: 'string' },
          'numeric-replaced': { type: 'string' },
        },
        required: [],
        details: [
          'CC is an ISO 3166 alpha-2 code. --alphanumeric refused: a sender of letters (ACME) cannot reach the',
          'country, a number must; required: a number cannot, a name must; replaced: a name reaches with the',
          "network's sender in its place, so a pool prefers a number there; allowed: either (a country without a",
          'rule). --numeric-replaced yes: its networks replace a numeric sender by their own, so a pool prefers a name',
          'there. An option left out keeps its value; --country alone shows the rule. Tern ships rules for the',
          'countries public providers list (US, CA, CN, …); every process applies a change within a second. A',
          'message no sender of its account may take to its country fails no_compliant_sender.',
          'Prints one line per country: {"country","alphanumeric","numeric_replaced"}.',
        ].join('\n'),
        run: countrySenders,
      },
    },
  },
};

async function countrySenders(services: Services, values: Values): Promise<void> {
  const rules = services.countrySenderRules;
  if (values.list === true) {
    if (values.country !== undefined) throw new UsageError('countries senders takes --list or --country');
    for (const rule of await rules.list()) printRule(rule);
    return;
  }
  if (typeof values.country !== 'string')
    throw new UsageError('countries senders takes --list, or --country CC and the rule to set');
  const alphanumeric = values.alphanumeric;
  if (alphanumeric !== undefined && !ALPHANUMERIC.includes(String(alphanumeric)))
    throw new UsageError('--alphanumeric takes allowed, replaced, refused or required');
  const replaced = values['numeric-replaced'];
  if (replaced !== undefined && replaced !== 'yes' && replaced !== 'no')
    throw new UsageError('--numeric-replaced takes yes or no');
  if (alphanumeric === undefined && replaced === undefined) {
    const country = values.country.trim().toUpperCase();
    if (!isKnownCountry(country))
      throw new UsageError(`--country takes an ISO 3166 alpha-2 code: ${country} is not one`);
    await rules.refresh();
    printRule({ alphanumeric: 'allowed', numericReplaced: false, ...rules.ruleOf(country), country });
    return;
  }
  printRule(
    await rules.set({
      country: values.country,
      alphanumeric,
      numericReplaced: replaced === undefined ? undefined : replaced === 'yes',
    }),
  );
}

/** What `routes explain --account` adds: the sender a message to the number would go from, and why. */
export async function explainSender(services: Services, account: string | null, to: string) {
  if (!account) return { sender: null, sender_reason: 'the sender depends on the account (--account)' };
  const { sender, reason } = await services.senderChoice.preview(account, to);
  return { sender: sender === 'refused' ? null : sender, sender_reason: reason };
}
