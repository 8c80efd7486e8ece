import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { NotAuthorized } from '../domain/errors.js';

/**
 * Where the server may call out to (docs/security.md, "Outbound calls"). Subscription
 * callbacks and pending agreements' acceptance addresses are chosen by callers, so a caller
 * could otherwise make the server reach what only it can reach: its own loopback services,
 * the site's private network, a cloud's metadata address. Every such URL is checked when it
 * is registered and again at each call (a name may resolve elsewhere later): each address it
 * resolves to must be public, unless WSAG_OUTBOUND_ALLOW names its range. Redirects are not
 * followed (`redirect: 'manual'` at the call), so an allowed address cannot send the server on.
 */
export type OutboundRange = 'loopback' | 'private' | 'link-local';
export const outboundRanges: readonly OutboundRange[] = ['loopback', 'private', 'link-local'];

const subnets: Record<OutboundRange, Array<[string, number, 'ipv4' | 'ipv6']>> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['0.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
    ['::', 128, 'ipv6'],
  ],
  private: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['100.64.0.0', 10, 'ipv4'],
    ['fc00::', 7, 'ipv6'],
  ],
  'link-local': [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
};

const lists = Object.fromEntries(
  outboundRanges.map((range) => {
    const list = new BlockList();
    for (const [address, prefix, family] of subnets[range]) list.addSubnet(address, prefix, family);
    return [range, list];
  }),
) as Record<OutboundRange, BlockList>;

/** The range an address lies in, if it is not public; IPv4 written as IPv6 (::ffff:a.b.c.d) counts as IPv4. */
export function rangeOf(address: string): OutboundRange | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const plain = mapped ?? address.replace(/^\[|\]$/g, '');
  const family = isIP(plain) === 4 ? 'ipv4' : 'ipv6';
  return outboundRanges.find((range) => lists[range].check(plain, family));
}

export class OutboundPolicy {
  private readonly allowed: ReadonlySet<OutboundRange>;

  constructor(
    allowed: readonly OutboundRange[] = [],
    private readonly resolve: (host: string) => Promise<string[]> = resolveAll,
  ) {
    this.allowed = new Set(allowed);
  }

  /** Refuses `url` (named as `what`) when a address it reaches is in a range the site does not allow. */
  async check(url: string, what: string): Promise<void> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : await this.resolve(host);
    } catch {
      throw new NotAuthorized(`${what} ${url}: the name ${host} does not resolve`);
    }
    for (const address of addresses) {
      const range = rangeOf(address);
      if (range && !this.allowed.has(range)) {
        throw new NotAuthorized(
          `${what} ${url} reaches ${address}, a ${range} address: this server calls public addresses only, ` +
            `unless the site allows the range (WSAG_OUTBOUND_ALLOW=${range})`,
        );
      }
    }
  }
}

async function resolveAll(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
}
