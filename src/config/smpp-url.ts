import type { SmppConfig } from '../config.js';
import { ConfigError } from './environment.js';

/**
 * `smpp://system_id:password@host:port` (`smpps://` for TLS; ports 2775 and 3550 by default).
 * SMPP 3.4 allows a system_id of up to 15 characters and a password of up to 8.
 */
export function parseSmppUrl(
  text: string,
): Pick<SmppConfig, 'host' | 'port' | 'tls' | 'systemId' | 'password'> {
  const invalid = (why: string) =>
    new ConfigError(
      `invalid configuration: SMPP_URL ${why} (expected smpp://system_id:password@host:port, smpps:// for TLS)`,
    );
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('is not a URL');
  }
  if (url.protocol !== 'smpp:' && url.protocol !== 'smpps:') throw invalid(`has the scheme ${url.protocol}`);
  if (!url.hostname) throw invalid('names no host');
  const systemId = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  if (!systemId || systemId.length > 15) throw invalid('needs a system_id of 1..15 characters');
  if (password.length > 8) throw invalid('has a password longer than the 8 characters SMPP 3.4 allows');
  const tls = url.protocol === 'smpps:';
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : tls ? 3550 : 2775,
    tls,
    systemId,
    password,
  };
}
