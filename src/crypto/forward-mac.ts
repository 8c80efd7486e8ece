import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * How an instance of a cluster proves to the planning leader that it forwarded a request
 * (docs/deployment.md, "Instances trust each other"): an HMAC-SHA256, keyed with the
 * cluster secret, over the method, the path, the time, a random nonce, the body's SHA-256
 * and the TLS caller's chain it hands on. The secret itself never travels; a message is
 * good for `maxAgeMs` either side of its time, and once.
 */
export const forwardMacHeader = 'x-wsag-forward-mac';

export interface ForwardedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  body: Buffer;
  /** The forwarded client chain header, if any. */
  chain?: string;
}

const maxAgeMs = 60_000;

/** The header value for `request`, made at `now`. */
export function forwardMac(secret: string, request: ForwardedRequest, now: Date): string {
  const time = now.getTime();
  const nonce = randomBytes(16).toString('hex');
  return `v1 t=${time} n=${nonce} mac=${macOf(secret, request, time, nonce)}`;
}

/**
 * Checks a forward MAC; returns why it fails, or undefined when it holds. `seen` remembers
 * the nonces of the last `maxAgeMs`, so a captured message cannot be sent again.
 */
export function checkForwardMac(
  secret: string,
  header: string,
  request: ForwardedRequest,
  now: Date,
  seen: Map<string, number>,
): string | undefined {
  const parts = /^v1 t=(\d+) n=([0-9a-f]{32}) mac=([0-9a-f]{64})$/.exec(header);
  if (!parts) return `the ${forwardMacHeader} header is not "v1 t=<ms> n=<nonce> mac=<hex>"`;
  const [, timeText, nonce, mac] = parts as unknown as [string, string, string, string];
  const time = Number(timeText);
  if (Math.abs(now.getTime() - time) > maxAgeMs)
    return (
      `the forwarded request was made at ${new Date(time).toISOString()}, more than ${maxAgeMs / 1000} s ` +
      `from now: are the instances' clocks apart?`
    );
  const expected = Buffer.from(macOf(secret, request, time, nonce), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(mac, 'hex')))
    return (
      "the forwarded request's MAC does not hold: it was not forwarded by an instance of this cluster " +
      '(WSAG_CLUSTER_SECRET), or was changed on the way'
    );
  for (const [old, at] of seen) {
    if (at >= now.getTime() - 2 * maxAgeMs) break;
    seen.delete(old);
  }
  if (seen.has(nonce)) return 'this forwarded request was received already';
  seen.set(nonce, now.getTime());
  return undefined;
}

function macOf(secret: string, request: ForwardedRequest, time: number, nonce: string): string {
  const body = createHash('sha256').update(request.body).digest('hex');
  return createHmac('sha256', secret)
    .update([request.method.toUpperCase(), request.path, String(time), nonce, body, request.chain ?? ''].join('\n'))
    .digest('hex');
}
