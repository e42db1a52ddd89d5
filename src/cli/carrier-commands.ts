import { readFileSync, statSync } from 'node:fs';
import type { CarrierRecord, RouteRecord } from '../carriers/carrier-catalog.js';
import { MAX_TEMPLATE_BYTES } from '../carriers/http/generic-template.js';
import type { WorkerCarrierHealth } from '../carriers/routing/carrier-health.js';
import { RouteTable } from '../carriers/routing/route-table.js';
import { AppError } from '../errors.js';
import type { Services } from '../services.js';
import { accountOf, type Group, print, UsageError, type Values } from './command-kit.js';
import { explainSender } from './sender-commands.js';

// The operator's carriers and routes: `carriers …` and `routes …`; src/cli.ts parses and runs them.

const CARRIER_LINE =
  'Prints {"carrier","kind","url","callback_url","max_per_second","binds","enabled","binds_open","state","circuit","last_error","last_hour"}; the URL never shows the password or API key. kind is what the URL names (smpp, simulator, twilio, vonage, infobip, android, http). binds and binds_open are null for a carrier of no SMPP sessions. callback_url (HTTP carriers) is where the provider sends reports and replies, PUBLIC_URL/carriers/NAME/events. last_error is the latest trouble a worker reports (a refused bind names the SMSC\'s status, e.g. ESME_RINVPASWD), null when none. last_hour is {"hand_overs","delivered","failed"}: of the messages accepted in the last hour (from the quarter-hour that began an hour ago), those that went to the carrier, and how many of them it delivered and how many failed.';
const ROUTE_LINE = 'Prints {"route","prefix","account","carriers","split"}.';
const CARRIER_OPTIONS = {
  url: { type: 'string' },
  template: { type: 'string' },
  'max-per-second': { type: 'string' },
  binds: { type: 'string' },
} as const;
const ROUTE_OPTIONS = { carriers: { type: 'string' }, split: { type: 'string' } } as const;

export const CARRIER_GROUPS: Record<string, Group> = {
  carriers: {
    summary: 'add, list, update, disable, enable and remove the carriers messages go out through',
    commands: {
      add: {
        summary: 'add a carrier; every running process binds to it within seconds',
        synopsis: 'NAME --url URL [--template FILE] [--max-per-second N] [--binds N]',
        options: CARRIER_OPTIONS,
        positional: 'name',
        required: ['name', 'url'],
        details: `NAME is 1..40 of a-z, 0-9 and -. URL is smpp://system_id:password@host:port[?source_addr=…&window=…&system_type=…&concat=udh|payload] (smpps:// for TLS) or simulator://[?delay_ms=…]; twilio://ACCOUNT_SID:AUTH_TOKEN@api.twilio.com?from=…|messaging_service=MG…, or http(s)://[user:password@]host with --template FILE (JSON, docs/carriers.md); tls=false speaks plain HTTP to a provider on loopback. An HTTP carrier needs PUBLIC_URL. --max-per-second is one pace for the whole cluster (none: unpaced); --binds is how many SMPP sessions the whole cluster keeps open (default 1), shared among the worker processes.\n${CARRIER_LINE}`,
        async run(services, values) {
          const added = await services.carrierCatalog.addCarrier(String(values.name), {
            ...carrierInput(values),
            url: String(values.url),
          });
          await printCarriers(services, [added]);
        },
      },
      list: {
        summary: 'list the carriers with the binds open to each across the cluster and their state',
        synopsis: '',
        options: {},
        required: [],
        details: `One line per carrier. ${CARRIER_LINE}`,
        async run(services) {
          await printCarriers(services, (await services.carrierCatalog.settings()).carriers);
        },
      },
      update: {
        summary: 'change a carrier; a new URL makes every process bind again',
        synopsis: 'NAME [--url URL] [--template FILE] [--max-per-second N|none] [--binds N]',
        options: CARRIER_OPTIONS,
        positional: 'name',
        required: ['name'],
        details: CARRIER_LINE,
        async run(services, values) {
          const url = typeof values.url === 'string' ? { url: values.url } : {};
          const updated = await services.carrierCatalog.updateCarrier(String(values.name), {
            ...carrierInput(values),
            ...url,
          });
          await printCarriers(services, [updated]);
        },
      },
      disable: {
        summary: 'stop giving a carrier new messages; its receipts and replies still count',
        synopsis: 'NAME',
        options: {},
        positional: 'name',
        required: ['name'],
        details: CARRIER_LINE,
        run: (services, values) => setEnabled(services, values, false),
      },
      enable: {
        summary: 'give a disabled carrier messages again',
        synopsis: 'NAME',
        options: {},
        positional: 'name',
        required: ['name'],
        details: CARRIER_LINE,
        run: (services, values) => setEnabled(services, values, true),
      },
      remove: {
        summary: 'remove a carrier no route names any more, failing the messages left pinned to it',
        synopsis: 'NAME',
        options: {},
        positional: 'name',
        required: ['name'],
        details:
          'Refused while a route names it. Messages still pinned to it (queued after a hand-over whose outcome it never told) fail at once with error code carrier_removed. Prints {"carrier","removed":true,"messages_failed"}.',
        async run(services, values) {
          const failed = await services.carrierCatalog.removeCarrier(String(values.name), (carrier) =>
            services.messageDelivery.failPinnedTo(carrier),
          );
          print({ carrier: values.name, removed: true, messages_failed: failed });
        },
      },
    },
  },
  routes: {
    summary: 'add, list, update, remove and explain the routes that choose a carrier per message',
    commands: {
      add: {
        summary: 'add a route for a number prefix, for every account or one',
        synopsis: '--prefix P [--account EMAIL] (--carriers a,b,… | --split a=70,b=30)',
        options: { prefix: { type: 'string' }, account: { type: 'string' }, ...ROUTE_OPTIONS },
        required: ['prefix'],
        details: `P is the leading digits of the number (44, 4477) or *. --carriers are tried in order, the first that can take the message; --split chooses by weight, and a carrier that cannot take the message gives it to the others. One route per account (or global) and prefix.\n${ROUTE_LINE}`,
        async run(services, values) {
          const account =
            typeof values.account === 'string' ? await accountOf(services, { email: values.account }) : null;
          const added = await services.carrierCatalog.addRoute(
            String(values.prefix),
            account,
            routeInput(values),
          );
          await printRoutes(services, [added]);
        },
      },
      list: {
        summary: 'list the routes, global ones first',
        synopsis: '',
        options: {},
        required: [],
        details: `One line per route. ${ROUTE_LINE}`,
        async run(services) {
          await printRoutes(services, (await services.carrierCatalog.settings()).routes);
        },
      },
      update: {
        summary: "change a route's carriers or split",
        synopsis: 'ID (--carriers a,b,… | --split a=70,b=30)',
        options: ROUTE_OPTIONS,
        positional: 'id',
        required: ['id'],
        details: ROUTE_LINE,
        async run(services, values) {
          const updated = await services.carrierCatalog.updateRoute(String(values.id), routeInput(values));
          await printRoutes(services, [updated]);
        },
      },
      remove: {
        summary: 'remove a route',
        synopsis: 'ID',
        options: {},
        positional: 'id',
        required: ['id'],
        details: 'Prints {"route","removed":true}.',
        async run(services, values) {
          await services.carrierCatalog.removeRoute(String(values.id));
          print({ route: values.id, removed: true });
        },
      },
      explain: {
        summary: 'say which route a number takes, the carriers in the order they would be tried, and why',
        synopsis: '--to NUMBER [--account EMAIL]',
        options: { to: { type: 'string' }, account: { type: 'string' } },
        required: ['to'],
        details:
          'Prints {"route","prefix","account","carriers","reason","sender","sender_reason"}: the sender is the one a message of the account\n' +
          'to the number would go from without `from` (null: the carrier’s own). A number no route covers is an error (no_route).',
        run: explain,
      },
    },
  },
};

function wholeNumber(values: Values, option: string): number | undefined {
  const value = values[option];
  if (typeof value !== 'string') return undefined;
  if (!/^[0-9]{1,9}$/.test(value)) throw new UsageError(`--${option} takes a whole number`);
  return Number(value);
}

function carrierInput(values: Values) {
  const pace = values['max-per-second'];
  return {
    ...(typeof values.template === 'string' ? { template: readTemplate(values.template) } : {}),
    ...(pace === undefined
      ? {}
      : { maxPerSecond: pace === 'none' ? null : wholeNumber(values, 'max-per-second') }),
    ...(values.binds === undefined ? {} : { binds: wholeNumber(values, 'binds') }),
  };
}

/** The template file's text, refused unread when it is larger than any template may be. */
function readTemplate(path: string): string {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    throw new UsageError(`--template: cannot read ${path}`);
  }
  if (size > MAX_TEMPLATE_BYTES)
    throw new UsageError(`--template: ${path} is over ${MAX_TEMPLATE_BYTES} bytes`);
  return readFileSync(path, 'utf8');
}

function routeInput(values: Values) {
  return {
    ...(typeof values.carriers === 'string' ? { carriers: values.carriers } : {}),
    ...(typeof values.split === 'string' ? { split: values.split } : {}),
  };
}

async function setEnabled(services: Services, values: Values, enabled: boolean): Promise<void> {
  await printCarriers(services, [await services.carrierCatalog.setEnabled(String(values.name), enabled)]);
}

/**
 * Each carrier with what the workers publish of it (binds open across the cluster, state,
 * circuit, last error) and its part of the last hour's messages.
 */
async function printCarriers(services: Services, carriers: CarrierRecord[]): Promise<void> {
  const [published, activity] = await Promise.all([
    services.carrierHealth.read(null),
    services.carrierActivityReport.lastHour(),
  ]);
  for (const carrier of carriers) {
    const seen = published.filter((entry) => entry.carrier === carrier.name);
    const { kind, callbackUrl } = services.carrierCatalog.describe(carrier);
    const lastHour = activity.get(carrier.name) ?? { handOvers: 0, delivered: 0, failed: 0 };
    print({
      carrier: carrier.name,
      kind,
      url: carrier.url,
      callback_url: callbackUrl,
      max_per_second: carrier.maxPerSecond,
      // Only SMPP holds sessions: an HTTP provider or the simulator has no binds to count.
      binds: kind === 'smpp' ? carrier.binds : null,
      enabled: carrier.enabled,
      binds_open: kind === 'smpp' ? seen.reduce((sum, entry) => sum + (entry.bindsOpen ?? 0), 0) : null,
      state: clusterState(seen),
      circuit: seen.find((entry) => entry.circuit && entry.circuit !== 'closed')?.circuit ?? 'closed',
      last_error: seen.find((entry) => entry.lastError)?.lastError ?? null,
      last_hour: { hand_overs: lastHour.handOvers, delivered: lastHour.delivered, failed: lastHour.failed },
    });
  }
}

/**
 * `bound`/`ready` when some worker has it so, else what a worker holding a session says (one that
 * holds none is `standby` or `forwarding`), else the first; `unknown` when no worker runs.
 */
function clusterState(seen: WorkerCarrierHealth[]): string {
  const up = seen.find((entry) => entry.state === 'bound' || entry.state === 'ready');
  const holding = seen.find((entry) => entry.state !== 'standby' && entry.state !== 'forwarding');
  return up?.state ?? holding?.state ?? seen[0]?.state ?? 'unknown';
}

async function emails(services: Services, ids: (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  const rows = await services.accounts.emailsOf(wanted);
  return new Map(rows.map((row) => [row.id, row.email]));
}

async function printRoutes(services: Services, routes: RouteRecord[]): Promise<void> {
  const byId = await emails(
    services,
    routes.map((route) => route.accountId),
  );
  for (const route of routes) {
    print({
      route: route.id,
      prefix: route.prefix,
      account: route.accountId ? (byId.get(route.accountId) ?? route.accountId) : null,
      carriers: route.carriers,
      split: route.split,
    });
  }
}

async function explain(services: Services, values: Values): Promise<void> {
  if (!/^\+?[1-9][0-9]{0,14}$/.test(String(values.to)))
    throw new UsageError(
      '--to takes a phone number in international form: up to 15 digits, optionally after +',
    );
  const to = String(values.to).replace(/^\+/, '');
  const email = typeof values.account === 'string' ? values.account : null;
  const account = email ? await accountOf(services, { email }) : null;
  const match = new RouteTable((await services.carrierCatalog.settings()).routes).find(to, account);
  if (!match)
    throw new AppError(
      'validation_error',
      `no_route: no route covers ${to}; routes add --prefix … gives it one`,
    );
  const { route } = match;
  const split = route.split;
  const carriers = split ? [...route.carriers].sort((a, b) => split[b]! - split[a]!) : route.carriers;
  const how = split
    ? `; the first carrier is drawn by weight (${carriers.map((name) => `${name}=${split[name]}`).join(', ')}), the others follow in the same way`
    : '; tried in this order, the first that can take the message';
  print({
    route: route.id,
    prefix: route.prefix,
    account: route.accountId ? email : null,
    carriers,
    reason: `${match.reason}${how}`,
    ...(await explainSender(services, account, to)),
  });
}
