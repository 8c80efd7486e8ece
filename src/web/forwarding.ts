import { clusterStateJson, registerClusterGauges, type ClusterState } from './cluster-state.js';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { ServiceUnavailable } from '../domain/errors.js';
import { forwardMac, forwardMacHeader } from '../crypto/forward-mac.js';
import { ClientChains, encodedClientChain, forwardedChainHeader } from '../soap/authentication.js';
import { readBody } from '../soap/http-endpoint.js';
import type { Caller } from '../domain/identity.js';
import { errorBoundary } from './error-boundary.js';
import { sendProblem } from './problem.js';
import { crossSiteGuard, hardeningHeaders } from './hardening.js';

/** Marks a request a standby forwarded; a standby never forwards such a request again. */
export const forwardedByHeader = 'x-wsag-forwarded-by';
/** On a 503 answer: the instance is not the leader (it stepped down); nothing was done, ask the new one. */
const notLeaderHeader = 'x-wsag-not-leader';

/** How long a request waits for a leader to answer (a takeover restores the plan first). */
export const defaultLeaderWaitMs = 15_000;
const retryEveryMs = 250;

/** Connection-level headers (RFC 9110 section 7.6.1) and ours, which a caller may not set. */
// Origin and Sec-Fetch-Site are checked here, against this instance's own address, and not sent on.
const dropped = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'origin',
  'sec-fetch-site',
  forwardedChainHeader,
  forwardMacHeader,
  forwardedByHeader,
  notLeaderHeader,
]);

export interface ForwardingOptions {
  /**
   * The leader's base URL as last announced (`fresh`: read it again, the last one failed); undefined while none is
   * known.
   */
  leaderUrl: (fresh: boolean) => Promise<string | undefined>;
  /** This instance's own URL, where it serves as the leader once it has taken over. */
  instanceUrl: string;
  /** WSAG_CLUSTER_SECRET: the key of the MAC sent with a TLS caller's certificate chain (never the secret itself). */
  secret?: string;
  maxBodyBytes: number;
  waitMs?: number;
  soapPaths: readonly string[];
  now: () => Date;
  logger: Logger;
  /**
   * Who is calling (TLS client certificate, or anonymous where the site allows it); throws NotAuthenticated. Absent:
   * everyone is anonymous.
   */
  identify?: (req: Request) => Caller;
  /** Who plans, as this standby sees it (/api/cluster and the cluster gauges of /metrics). */
  cluster?: () => ClusterState;
}

/** The leader could not be reached: nothing was sent to it, so the request may go to the next leader. */
class NotReached extends Error {}

/**
 * A standby instance of a cluster (docs/deployment.md): it answers its own /healthz and
 * /metrics and forwards everything else to the planning leader, waiting through a takeover
 * for a new leader. A request the leader may have received before it failed is not sent
 * again: its outcome is unknown, and the caller hears so.
 */
export function standbyApp(options: ForwardingOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const cluster = options.cluster ?? ((): ClusterState => ({ role: 'standby' }));
  registerClusterGauges(registry, cluster);
  const forwarded = new Counter({
    name: 'wsag_forwarded_requests_total',
    help: 'Requests this standby forwarded to the planning leader, by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const agent = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  let leader: string | undefined;
  const chains = new ClientChains();

  app.get('/healthz', (req, res) => {
    res.json(health('standby', leader ?? null, req, options.identify));
  });
  // Answered here, not by the leader: who plans as this instance sees it (the leader may be gone).
  app.get('/api/cluster', (req, res) => {
    try {
      options.identify?.(req);
      res.json(clusterStateJson(cluster()));
    } catch (error) {
      sendProblem(res, error, 'reading the cluster state', options.logger);
    }
  });
  // The same rule as the leader's /metrics: authenticated parties only, where the site asks for them.
  app.get('/metrics', async (req, res) => {
    try {
      options.identify?.(req);
      res.type(registry.contentType).send(await registry.metrics());
    } catch (error) {
      sendProblem(res, error, 'reading the metrics', options.logger);
    }
  });
  app.use(hardeningHeaders());
  app.use(crossSiteGuard(() => undefined));
  app.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (req.headers[forwardedByHeader] !== undefined) {
        res
          .status(503)
          .set(notLeaderHeader, '1')
          .type('text/plain')
          .send('ServiceUnavailable: this instance is not the planning leader\n');
        return;
      }
      const body = await readBody(req, options.maxBodyBytes);
      const headers = forwardHeaders(req, options, body, chains);
      const deadline = Date.now() + (options.waitMs ?? defaultLeaderWaitMs);
      for (let fresh = false; ; fresh = true) {
        leader = await options.leaderUrl(fresh).catch(() => undefined);
        // The leader may be this very instance, once it has taken over: its own port then serves the leader's app. An
        // announcement that names it while it still stands by answers 503 not-leader, and the next turn asks again.
        if (leader !== undefined) {
          try {
            await relay(new URL(req.originalUrl, leader), req, headers, body, res, agent);
            forwarded.inc({ outcome: 'answered' });
            return;
          } catch (error) {
            if (!(error instanceof NotReached)) {
              forwarded.inc({ outcome: 'unknown' });
              throw new ServiceUnavailable(
                `the planning leader failed while it held this request (${(error as Error).message}); whether ` +
                  `it was carried out is unknown: ask for the state of what it asked for before sending it again`,
              );
            }
          }
        }
        if (Date.now() >= deadline) {
          forwarded.inc({ outcome: 'no-leader' });
          throw new ServiceUnavailable(
            `no planning leader answered within ${(options.waitMs ?? defaultLeaderWaitMs) / 1000} s (a ` +
              `takeover may be under way): try again shortly`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, retryEveryMs));
      }
    } catch (error) {
      next(error);
    }
  });
  app.use(errorBoundary({ soapPaths: options.soapPaths, now: options.now, logger: options.logger }));
  return app;
}

/**
 * An instance's /healthz: its status and role for anyone (load balancers), and the leader's
 * address only for a caller the site lets in: it is an internal address.
 */
export function health(
  role: 'leader' | 'standby',
  leader: string | null,
  req: IncomingMessage,
  identify?: (req: Request) => Caller,
): { status: 'ok'; role: string; leader?: string | null } {
  try {
    identify?.(req as Request);
    return { status: 'ok', role, leader };
  } catch {
    return { status: 'ok', role };
  }
}

function forwardHeaders(
  req: Request,
  options: ForwardingOptions,
  body: Buffer,
  chains: ClientChains,
): http.OutgoingHttpHeaders {
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers))
    if (!dropped.has(name) && value !== undefined) headers[name] = value;
  headers['content-length'] = String(body.length);
  headers['x-forwarded-for'] = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
  headers['x-forwarded-proto'] = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  headers[forwardedByHeader] = options.instanceUrl;
  const chain = encodedClientChain(req, chains);
  if (chain !== undefined && options.secret !== undefined) {
    headers[forwardedChainHeader] = chain;
    headers[forwardMacHeader] = forwardMac(
      options.secret,
      { method: req.method, path: req.originalUrl, body, chain },
      options.now(),
    );
  }
  return headers;
}

/** Sends the request to the leader and streams its answer back (event streams included). */
function relay(
  url: URL,
  req: Request,
  headers: http.OutgoingHttpHeaders,
  body: Buffer,
  res: Response,
  agent: { http: http.Agent; https: https.Agent },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const upstream = (secure ? https : http).request(
      url,
      { method: req.method, headers, agent: secure ? agent.https : agent.http },
      (answer) => {
        if (answer.statusCode === 503 && answer.headers[notLeaderHeader] !== undefined) {
          answer.resume();
          reject(new NotReached('not the leader'));
          return;
        }
        const out: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (!dropped.has(name) || name === 'content-length') out[name] = value;
        res.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(res);
        answer.once('end', () => resolve());
        answer.once('error', () => resolve()); // the answer had begun: the caller sees it cut short
        res.once('close', () => answer.destroy());
      },
    );
    upstream.once('error', (error: NodeJS.ErrnoException) => {
      const refused = ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(
        error.code ?? '',
      );
      reject(refused ? new NotReached(error.message) : error);
    });
    res.once('close', () => upstream.destroy());
    upstream.end(body);
  });
}
