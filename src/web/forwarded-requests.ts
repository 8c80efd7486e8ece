import type { IncomingMessage, RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { checkForwardMac, forwardMacHeader } from '../crypto/forward-mac.js';
import { forwardedChainHeader } from '../soap/authentication.js';
import { refusalContext } from '../soap/http-safety.js';

const verified = new WeakSet<IncomingMessage>();

/** Whether `req` came from an instance of this cluster, its forward MAC checked. */
export function wasForwarded(req: IncomingMessage): boolean {
  return verified.has(req);
}

/**
 * The leader's listener, checking a forwarded request's MAC (src/crypto/forward-mac.ts)
 * before anything reads it: its body is read whole (a standby forwards at most
 * WSAG_MAX_BODY_BYTES), checked against the MAC and put back for the routes to read. A
 * request whose MAC fails is answered 401 and goes no further.
 */
export function checkingForwards(
  listener: RequestListener,
  options: { secret?: string; maxBodyBytes: number; now: () => Date; logger: Logger },
): RequestListener {
  const seen = new Map<string, number>();
  return (req, res) => {
    const header = req.headers[forwardMacHeader];
    if (header === undefined) {
      listener(req, res);
      return;
    }
    void (async () => {
      let why: string | undefined;
      try {
        const body = await readExactly(req, Number(req.headers['content-length'] ?? 0), options.maxBodyBytes);
        const chain = req.headers[forwardedChainHeader];
        why =
          options.secret === undefined
            ? 'this instance has no WSAG_CLUSTER_SECRET, so it takes no forwarded requests'
            : checkForwardMac(
                options.secret,
                String(header),
                {
                  method: req.method ?? 'GET',
                  path: req.url ?? '/',
                  body,
                  ...(chain !== undefined ? { chain: String(chain) } : {}),
                },
                options.now(),
                seen,
              );
        if (why === undefined) {
          if (body.length > 0) req.unshift(body);
          verified.add(req);
          listener(req, res);
          return;
        }
      } catch (error) {
        why = `the forwarded request could not be read: ${error instanceof Error ? error.message : String(error)}`;
      }
      options.logger.warn(
        { refused: 'NotAuthenticated', reason: why, method: req.method, path: req.url, ...refusalContext(req) },
        'forwarded request refused',
      );
      res.writeHead(401, { 'content-type': 'text/plain', connection: 'close' }).end(`NotAuthenticated: ${why}\n`);
    })();
  };
}

/** Reads exactly `length` bytes of the body without letting the stream end, so they can be put back. */
function readExactly(req: IncomingMessage, length: number, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (!(length >= 0) || length > limit) {
      reject(new Error(`its Content-Length ${req.headers['content-length']} is not a length up to ${limit} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let got = 0;
    const done = (error?: Error) => {
      req.off('readable', onReadable);
      req.off('end', onEnd);
      req.off('error', done);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks));
    };
    const onReadable = () => {
      for (let chunk: Buffer | null; got < length && (chunk = req.read() as Buffer | null) !== null; ) {
        chunks.push(chunk);
        got += chunk.length;
      }
      if (got > length) done(new Error('its body is longer than its Content-Length'));
      else if (got === length) done();
    };
    const onEnd = () => done(got === length ? undefined : new Error('its body is shorter than its Content-Length'));
    req.on('readable', onReadable);
    req.on('end', onEnd);
    req.on('error', done);
    if (length === 0) done();
  });
}
