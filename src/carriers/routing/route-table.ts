import type { RouteRecord } from '../carrier-catalog.js';

/** The route a number takes and why. */
export interface RouteMatch {
  route: RouteRecord;
  reason: string;
}

const GLOBAL = '';
const LONGEST_NUMBER = 15;

/**
 * The routes in memory, by scope (an account, or global) and prefix: a choice is at most sixteen
 * map lookups per scope, so that routing costs nothing next to the send itself.
 */
export class RouteTable {
  private readonly byScope = new Map<string, Map<string, RouteRecord>>();

  constructor(routes: readonly RouteRecord[]) {
    for (const route of routes) {
      const scope = route.accountId ?? GLOBAL;
      let table = this.byScope.get(scope);
      if (!table) {
        table = new Map();
        this.byScope.set(scope, table);
      }
      table.set(route.prefix, route);
    }
  }

  /** The most specific route: the account's own before a global one, then the longest prefix. */
  find(to: string, accountId: string | null): RouteMatch | null {
    if (accountId !== null) {
      const own = this.longest(this.byScope.get(accountId), to);
      if (own) return { route: own, reason: `the account's own route ${describe(own, to)}` };
    }
    const global = this.longest(this.byScope.get(GLOBAL), to);
    if (!global) return null;
    const none = accountId === null ? '' : 'the account has no route of its own for it; ';
    return { route: global, reason: `${none}the global route ${describe(global, to)}` };
  }

  private longest(table: Map<string, RouteRecord> | undefined, to: string): RouteRecord | undefined {
    if (!table) return undefined;
    for (let length = Math.min(LONGEST_NUMBER, to.length); length > 0; length -= 1) {
      const route = table.get(to.slice(0, length));
      if (route) return route;
    }
    return table.get('*');
  }
}

function describe(route: RouteRecord, to: string): string {
  return route.prefix === '*'
    ? '* (no prefix of it matches)'
    : `for prefix ${route.prefix}, the longest that matches ${to}`;
}

/**
 * The carriers in the order they are tried: an ordered list as it is; a split drawn by weight,
 * the first carrier and then each next one among those left, so that a carrier that cannot take
 * the message gives it to the others in proportion to their weights.
 */
export function carrierOrder(route: RouteRecord, random: () => number = Math.random): string[] {
  if (!route.split) return route.carriers;
  const left = Object.entries(route.split);
  const order: string[] = [];
  while (left.length > 0) {
    const total = left.reduce((sum, [, weight]) => sum + weight, 0);
    let point = random() * total;
    let index = 0;
    while (index < left.length - 1 && point >= left[index]![1]) {
      point -= left[index]![1];
      index += 1;
    }
    order.push(left.splice(index, 1)[0]![0]);
  }
  return order;
}
