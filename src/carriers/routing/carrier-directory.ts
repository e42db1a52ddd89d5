import type { Logger } from 'pino';
import type { CarrierCatalog, CarrierRecord, CarrierSettings } from '../carrier-catalog.js';
import { type RouteMatch, RouteTable } from './route-table.js';

/**
 * The carriers and routes as this process applies them: read from PostgreSQL at start and again
 * every `pollMs`, so that an operator's change reaches every process within seconds, with no
 * restart. Routing reads the copy in memory: no query per message.
 */
export class CarrierDirectory {
  private table = new RouteTable([]);
  private current: CarrierSettings = { carriers: [], routes: [] };
  private signature = '';
  private loaded: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners = new Set<(settings: CarrierSettings) => void>();

  constructor(
    private readonly catalog: CarrierCatalog,
    private readonly logger: Logger,
    private readonly pollMs: number,
  ) {}

  /** Resolves once the settings were read for the first time. */
  ready(): Promise<void> {
    this.loaded ??= this.refresh();
    return this.loaded;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.refresh().catch((error: unknown) =>
        this.logger.warn({ err: error }, 'carriers and routes not read; the last ones read stay in force'),
      );
    }, this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Called with the settings now and at each change. */
  onChange(listener: (settings: CarrierSettings) => void): void {
    this.listeners.add(listener);
    if (this.signature) listener(this.current);
  }

  find(to: string, accountId: string | null): RouteMatch | null {
    return this.table.find(to, accountId);
  }

  /** Whether some route covers the number (for the account). */
  async covers(to: string, accountId: string): Promise<boolean> {
    await this.ready();
    return this.table.find(to, accountId) !== null;
  }

  carrier(name: string): CarrierRecord | undefined {
    return this.current.carriers.find((carrier) => carrier.name === name);
  }

  get carriers(): readonly CarrierRecord[] {
    return this.current.carriers;
  }

  async refresh(): Promise<void> {
    const settings = await this.catalog.settings();
    const signature = JSON.stringify(settings);
    if (signature === this.signature) return;
    this.signature = signature;
    this.current = settings;
    this.table = new RouteTable(settings.routes);
    for (const listener of this.listeners) listener(settings);
  }
}
