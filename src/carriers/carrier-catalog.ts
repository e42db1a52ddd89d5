import { isUniqueViolation } from '../db/prisma-errors.js';
import { AppError, ConflictError } from '../errors.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { newId } from '../lib/ids.js';
import { SealedBox } from '../lib/sealed-box.js';
import { CARRIER_NAME, splitCarrierUrl, takeSecretOptions } from './carrier-url.js';
import { callbackUrlOf, carrierKind, checkHttpCarrier, newCallbackSecret } from './http/http-carriers.js';
import { parseRouteChoice, type RouteInput } from './routing/route-input.js';

/** A configured carrier as the processes use it: its secrets opened. */
export interface CarrierRecord {
  name: string;
  /** Without the password and the secret options. */
  url: string;
  password: string | null;
  /** The query options its provider kind declares secret (Vonage's signature_secret), by name. */
  secretOptions: Record<string, string>;
  /** An HTTP carrier's secret for its callbacks, made by Tern at add; null for other kinds. */
  callbackSecret: string | null;
  /** The generic HTTP carrier's template (JSON text); null for other kinds. */
  template: string | null;
  maxPerSecond: number | null;
  binds: number;
  enabled: boolean;
}

export interface RouteRecord {
  id: string;
  prefix: string;
  accountId: string | null;
  /** In the order they are tried; a split's carriers. */
  carriers: string[];
  /** Weights by carrier for a split; null for an ordered list. */
  split: Record<string, number> | null;
}

/** Everything the processes need to route and bind, read in one go. */
export interface CarrierSettings {
  carriers: CarrierRecord[];
  routes: RouteRecord[];
}

export interface CarrierInput {
  url?: string;
  /** The template file's text, for an http(s):// carrier. */
  template?: string;
  maxPerSecond?: number | null;
  binds?: number;
}

interface CarrierColumns {
  url?: string;
  passwordSealed?: string | null;
  secretOptionsSealed?: string | null;
  callbackSecretSealed?: string | null;
  template?: string | null;
  maxPerSecond?: number | null;
  binds?: number;
}

interface CarrierRow {
  name: string;
  url: string;
  passwordSealed: string | null;
  secretOptionsSealed: string | null;
  callbackSecretSealed: string | null;
  template: string | null;
  maxPerSecond: number | null;
  binds: number;
  enabled: boolean;
}

const PREFIX = /^(\*|[1-9][0-9]{0,14})$/;
const MAX_BINDS = 64;

function invalid(message: string): AppError {
  return new AppError('validation_error', message);
}

/**
 * The operator's carriers and routes in PostgreSQL. Passwords and secret options are sealed with
 * the carrier's name as associated data, so a sealed value copied onto another carrier does not
 * open.
 */
export class CarrierCatalog {
  private readonly box: SealedBox;

  constructor(
    private readonly prisma: PrismaClient,
    key: Buffer,
    /** PUBLIC_URL: an HTTP carrier its provider calls back cannot be added without it. */
    private readonly publicUrl: string | null = null,
  ) {
    this.box = new SealedBox(key);
  }

  async addCarrier(name: string, input: CarrierInput & { url: string }): Promise<CarrierRecord> {
    if (!CARRIER_NAME.test(name)) throw invalid('invalid NAME: 1..40 of a-z, 0-9 and -');
    try {
      const data = this.carrierData(name, input, null);
      await this.prisma.carrier.create({ data: { name, ...data, url: data.url ?? input.url } });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`a carrier named ${name} exists already`);
      throw error;
    }
    return this.carrier(name);
  }

  async updateCarrier(name: string, input: CarrierInput): Promise<CarrierRecord> {
    const current = await this.carrier(name);
    await this.prisma.carrier.update({ where: { name }, data: this.carrierData(name, input, current) });
    return this.carrier(name);
  }

  async setEnabled(name: string, enabled: boolean): Promise<CarrierRecord> {
    await this.carrier(name);
    await this.prisma.carrier.update({ where: { name }, data: { enabled } });
    return this.carrier(name);
  }

  /**
   * Refused while a route names the carrier; the refusal names every such route. Once it is gone,
   * `failPinned` fails the messages left pinned to it (the messages domain's to do); how many.
   */
  async removeCarrier(
    name: string,
    failPinned: (carrier: string) => Promise<number> = async () => 0,
  ): Promise<number> {
    await this.carrier(name);
    const using = await this.prisma.route.findMany({
      where: { carriers: { has: name } },
      orderBy: [{ scope: 'asc' }, { prefix: 'asc' }],
    });
    if (using.length > 0) {
      const routes = using.map((route) => `${route.id} (prefix ${route.prefix})`).join(', ');
      throw new ConflictError(
        `${using.length === 1 ? 'route' : `${using.length} routes`} ${routes} still ${using.length === 1 ? 'names' : 'name'} ${name}: remove or update ${using.length === 1 ? 'it' : 'them'} first`,
      );
    }
    await this.prisma.carrier.delete({ where: { name } });
    // After the delete, so that a message some process pinned to it meanwhile is failed too.
    return failPinned(name);
  }

  async carrier(name: string): Promise<CarrierRecord> {
    const row = await this.prisma.carrier.findUnique({ where: { name } });
    if (!row) throw new AppError('not_found', `no carrier is named ${name}`);
    return this.record(row);
  }

  /** What `carriers list` shows of a carrier besides its record: its kind and where its provider calls back. */
  describe(record: CarrierRecord): { kind: string; callbackUrl: string | null } {
    return { kind: carrierKind(record.url), callbackUrl: callbackUrlOf(record, this.publicUrl) };
  }

  async addRoute(prefix: string, accountId: string | null, input: RouteInput): Promise<RouteRecord> {
    if (!PREFIX.test(prefix)) throw invalid('invalid --prefix: up to 15 digits, the first not 0, or *');
    const id = newId('rte');
    try {
      await this.prisma.route.create({
        data: { id, prefix, accountId, scope: accountId ?? '', ...(await this.routeData(input)) },
      });
    } catch (error) {
      if (isUniqueViolation(error))
        throw new ConflictError(`a route for prefix ${prefix} exists already for this scope`);
      throw error;
    }
    return this.route(id);
  }

  async updateRoute(id: string, input: RouteInput): Promise<RouteRecord> {
    await this.route(id);
    await this.prisma.route.update({ where: { id }, data: await this.routeData(input) });
    return this.route(id);
  }

  async removeRoute(id: string): Promise<void> {
    await this.route(id);
    await this.prisma.route.delete({ where: { id } });
  }

  async route(id: string): Promise<RouteRecord> {
    const row = await this.prisma.route.findUnique({ where: { id } });
    if (!row) throw new AppError('not_found', `no route has the id ${id}`);
    return routeRecord(row);
  }

  /** Every carrier and route, as the processes apply them. */
  async settings(): Promise<CarrierSettings> {
    const [carriers, routes] = await Promise.all([
      this.prisma.carrier.findMany({ orderBy: { name: 'asc' } }),
      this.prisma.route.findMany({ orderBy: [{ scope: 'asc' }, { prefix: 'asc' }] }),
    ]);
    return { carriers: carriers.map((row) => this.record(row)), routes: routes.map(routeRecord) };
  }

  /**
   * With no carrier configured, carrier `default` from CARRIER/SMPP_URL and the route `*` to it;
   * processes starting together create them once.
   */
  async ensureDefault(url: string, maxPerSecond: number | null): Promise<void> {
    if ((await this.prisma.carrier.count()) > 0) return;
    await this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('tern carriers default'))`;
      if ((await tx.carrier.count()) > 0) return;
      const data = this.carrierData('default', { url, maxPerSecond }, null);
      await tx.carrier.create({ data: { name: 'default', ...data, url: data.url ?? url } });
      await tx.route.create({
        data: { id: newId('rte'), prefix: '*', accountId: null, scope: '', carriers: ['default'] },
      });
    });
  }

  /**
   * Whether carrier `default` exists with another URL or secrets than `url` gives; compared
   * without any of them ever being printed.
   */
  async defaultDiffersFrom(url: string): Promise<boolean> {
    const row = await this.prisma.carrier.findUnique({ where: { name: 'default' } });
    if (!row) return false;
    const stored = this.record(row);
    const given = splitCarrierUrl(url);
    return (
      stored.url !== given.url ||
      stored.password !== given.password ||
      sortedJson(stored.secretOptions) !== sortedJson(given.secretOptions)
    );
  }

  /**
   * Seals the secret options that rows written before they were sealed apart keep in their URL (a
   * vonage:// carrier's signature_secret), so that none stays in clear; run at start. A row
   * changed meanwhile is left to the change, which seals them itself.
   */
  async sealSecretOptionsLeftInUrls(): Promise<void> {
    for (const row of await this.prisma.carrier.findMany()) {
      const record = this.record(row);
      if (record.url === row.url) continue;
      await this.prisma.carrier.updateMany({
        where: { name: row.name, url: row.url },
        data: { url: record.url, secretOptionsSealed: this.sealOptions(row.name, record.secretOptions) },
      });
    }
  }

  /** The columns `input` sets; `current` is the carrier being updated, null for a new one. */
  private carrierData(name: string, input: CarrierInput, current: CarrierRecord | null): CarrierColumns {
    const data: CarrierColumns = {};
    if (input.maxPerSecond !== undefined) {
      if (input.maxPerSecond !== null && !(input.maxPerSecond >= 1))
        throw invalid('invalid --max-per-second: a whole number from 1, or none');
      data.maxPerSecond = input.maxPerSecond;
    }
    if (input.binds !== undefined) {
      if (!(input.binds >= 1 && input.binds <= MAX_BINDS))
        throw invalid(`invalid --binds: a whole number from 1 to ${MAX_BINDS}`);
      data.binds = input.binds;
    }
    if (input.url === undefined && input.template === undefined) return data;
    return { ...data, ...this.addressData(name, input, current) };
  }

  /** The URL, its secret, and an HTTP carrier's template and callback secret, checked together. */
  private addressData(name: string, input: CarrierInput, current: CarrierRecord | null): CarrierColumns {
    if (input.url === undefined && current === null) throw invalid('--url is required');
    const { url, password, secretOptions } = input.url === undefined ? current! : splitCarrierUrl(input.url);
    // A template stays with a new URL of the same kind only.
    const kept = current?.template && carrierKind(current.url) === carrierKind(url) ? current.template : null;
    const template = input.template ?? kept;
    const http = checkHttpCarrier({
      name,
      url,
      secret: password,
      secretOptions,
      template,
      publicUrl: this.publicUrl,
    });
    const callbackSecret = http ? (current?.callbackSecret ?? newCallbackSecret()) : null;
    return {
      url,
      passwordSealed: password === null ? null : this.box.seal(name, password),
      secretOptionsSealed: this.sealOptions(name, secretOptions),
      callbackSecretSealed:
        callbackSecret === null ? null : this.box.seal(`${name}:callback`, callbackSecret),
      template: http ? template : null,
    };
  }

  private async routeData(input: RouteInput) {
    const { carriers, split } = parseRouteChoice(input);
    const known = await this.prisma.carrier.findMany({
      where: { name: { in: carriers } },
      select: { name: true },
    });
    const missing = carriers.filter((name) => !known.some((row) => row.name === name));
    if (missing.length > 0) throw new AppError('not_found', `no carrier is named ${missing.join(', ')}`);
    return { carriers, split: split ?? Prisma.DbNull };
  }

  private sealOptions(name: string, options: Record<string, string>): string | null {
    return Object.keys(options).length === 0 ? null : this.box.seal(`${name}:options`, sortedJson(options));
  }

  private record(row: CarrierRow): CarrierRecord {
    // A row written before secret options were sealed apart keeps them in its URL until the next start.
    const url = new URL(row.url);
    const leftInUrl = takeSecretOptions(url);
    const sealedOptions: Record<string, string> =
      row.secretOptionsSealed === null
        ? {}
        : JSON.parse(this.box.unseal(`${row.name}:options`, row.secretOptionsSealed));
    return {
      name: row.name,
      url: Object.keys(leftInUrl).length === 0 ? row.url : url.toString(),
      password: row.passwordSealed === null ? null : this.box.unseal(row.name, row.passwordSealed),
      secretOptions: { ...leftInUrl, ...sealedOptions },
      callbackSecret:
        row.callbackSecretSealed === null
          ? null
          : this.box.unseal(`${row.name}:callback`, row.callbackSecretSealed),
      template: row.template,
      maxPerSecond: row.maxPerSecond,
      binds: row.binds,
      enabled: row.enabled,
    };
  }
}

/** The options as JSON with their names in order, so that equal sets compare equal. */
function sortedJson(options: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(options).sort(([a], [b]) => (a < b ? -1 : 1))));
}

function routeRecord(row: {
  id: string;
  prefix: string;
  accountId: string | null;
  carriers: string[];
  split: unknown;
}): RouteRecord {
  return {
    id: row.id,
    prefix: row.prefix,
    accountId: row.accountId,
    carriers: row.carriers,
    split: (row.split as Record<string, number> | null) ?? null,
  };
}
