import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The addresses a host name resolves to; replaced in tests to map names without DNS. */
export type Resolve = (hostname: string) => Promise<string[]>;

export const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export interface DestinationPolicy {
  allowPrivateNetworks: boolean;
  allowInsecure: boolean;
}

/** A destination Tern will not call: a failed attempt that no retry can mend. */
export class DestinationRefusedError extends Error {}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local (cloud metadata lives there)',
  carrierGradeNat: 'carrier-grade NAT',
  uniqueLocal: 'unique-local (private)',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  reserved: 'reserved',
  ipv4Mapped: 'IPv4-mapped',
  rfc6052: 'NAT64',
  '6to4': '6to4',
  teredo: 'Teredo',
  ipv4Compatible: 'IPv4-compatible (deprecated)',
  notGlobal: 'non-global IPv6',
};

// ipaddr.js names the special ranges and calls everything else `unicast`, which for IPv6
// includes space that was never global (`::/96`, the deprecated IPv4-compatible form, routes to
// the IPv4 it carries on some stacks). Only 2000::/3 is allocated as global unicast.
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** The address's range as the SSRF check names it; `unicast` only for global unicast. */
function rangeOf(address: string): string {
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  if (range !== 'unicast' || parsed.kind() === 'ipv4') return range;
  if (parsed.match(IPV4_COMPATIBLE)) return 'ipv4Compatible';
  return parsed.match(GLOBAL_UNICAST_V6) ? 'unicast' : 'notGlobal';
}

/**
 * Resolves the URL's host and checks every address it has: only global unicast addresses may
 * be called, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is set; an IPv4-mapped IPv6 address is
 * judged as the IPv4 address it carries. Answers the address to connect to, so that the
 * connection goes where the check looked (no second lookup that DNS rebinding could answer).
 */
export async function resolveDestination(
  url: URL,
  policy: DestinationPolicy,
  resolve: Resolve,
): Promise<string> {
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowInsecure)) {
    throw new DestinationRefusedError(
      url.protocol === 'http:'
        ? 'destination refused: plain http is not allowed (WEBHOOK_ALLOW_INSECURE is off)'
        : `destination refused: ${url.protocol} URLs are not allowed`,
    );
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(host) !== 0;
  const addresses = literal ? [host] : await resolve(host);
  if (addresses.length === 0) throw new Error(`${host} has no address`);
  if (!policy.allowPrivateNetworks) assertPublic(host, literal, addresses);
  return addresses[0]!;
}

/** Refuses a host with any address that is not global unicast. */
function assertPublic(host: string, literal: boolean, addresses: string[]): void {
  const range = addresses.map(rangeOf).find((candidate) => candidate !== 'unicast');
  if (range === undefined) return;
  const kind = RANGE_NAMES[range] ?? range;
  // The address itself stays unsaid for names: the log would otherwise map the account's view of internal DNS.
  throw new DestinationRefusedError(
    literal
      ? `destination refused: ${host} is a ${kind} address, not a public one (WEBHOOK_ALLOW_PRIVATE_NETWORKS is off)`
      : `destination refused: ${host} resolves to a ${kind} address, not a public one (WEBHOOK_ALLOW_PRIVATE_NETWORKS is off)`,
  );
}
