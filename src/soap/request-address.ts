import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/** A host as a Host header may carry it: a name or an IPv4 address, or an IPv6 one in brackets, and a port. */
const hostPattern = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9-]{1,63})*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
/** Addresses a server listens on but no client can reach: never named in an answer. */
const unspecified = /^(?:0\.0\.0\.0|\[(?:0*:)*:?0*\])(?::\d+)?$/;

/**
 * The proxies whose X-Forwarded-Host and X-Forwarded-Proto are believed: addresses and
 * CIDR ranges (WSAG_TRUSTED_PROXIES, checked when the configuration is read).
 */
export function trustedProxies(entries: readonly string[]): (address: string | undefined) => boolean {
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return (address) => {
    if (!address) return false;
    const plain = address.replace(/^::ffff:(?=\d+\.)/, '');
    return list.check(plain, isIP(plain) === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * The base URL a client reached this server at, for the addresses in answers (EPRs, WSDL
 * ports): the request's Host and scheme, or X-Forwarded-Host and X-Forwarded-Proto when the
 * request came from a trusted proxy. Undefined when the request names no usable host (none,
 * malformed, or an unspecified address such as 0.0.0.0): the caller falls back to the
 * listening address.
 */
export function requestBaseUrl(
  req: IncomingMessage,
  trusted: (address: string | undefined) => boolean,
): string | undefined {
  const viaProxy = trusted(req.socket.remoteAddress);
  const forwarded = (name: string) => {
    const value = req.headers[name];
    return viaProxy ? (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim() || undefined : undefined;
  };
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  const proto = forwarded('x-forwarded-proto')?.toLowerCase();
  const scheme = proto === 'http' || proto === 'https' ? proto : encrypted ? 'https' : 'http';
  const host = forwarded('x-forwarded-host') ?? req.headers.host;
  if (host === undefined || !hostPattern.test(host) || unspecified.test(host)) return undefined;
  return `${scheme}://${host.toLowerCase()}`;
}
