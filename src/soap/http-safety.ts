import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { NotAuthorized, UnsupportedMediaType, type WsagError } from '../domain/errors.js';

/**
 * No cross-site writes (docs/security.md, "Cross-site requests"). A browser sends its user's
 * TLS client certificate to any page's requests, so a page on another site could make an
 * operator's browser fail a node or a user's create an agreement. Every request that may
 * change something (any method but GET, HEAD and OPTIONS) must:
 * - not come from another site: `Sec-Fetch-Site`, when the browser sends it, is
 *   `same-origin` or `none`, and `Origin`, when sent, is this server's own;
 * - when it is a POST (the one such method a page may send without asking first, CORS
 *   preflight, which this server never grants), carry a media type no form can send: not a
 *   form's or `text/plain`, and not none, unless it carries the `X-Requested-With` header.
 * The wsag client, the dashboard and every SOAP stack already do; a `curl` user adds
 * `-H 'Content-Type: application/json'` or `-H 'X-Requested-With: curl'`.
 */
export const clientHeader = 'x-requested-with';

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);
/** What a form or a no-cors fetch may send (the CORS-safelisted request types). */
const formTypes = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

/**
 * Headers on every answer that is data (all but the dashboard): never run as a page of this origin, sniffed into
 * another type, or framed.
 */
export const dataHeaders: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'none'; sandbox; frame-ancestors 'none'",
};

/**
 * Why `req` may not change anything here, or undefined when it may; `publicOrigin` gives the
 * server's configured address, read only when the request names an Origin (not on every request).
 */
export function crossSiteRefusal(req: IncomingMessage, publicOrigin: () => string | undefined): WsagError | undefined {
  if (safeMethods.has(req.method ?? 'GET')) return undefined;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return new NotAuthorized(
      `a request from another site (Sec-Fetch-Site: ${String(site).slice(0, 20)}) may not change anything ` +
        `here: only this server's own pages and clients may`,
    );
  }
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== ownOrigin(req)) {
    const configured = publicOrigin();
    if (origin !== configured)
      return new NotAuthorized(
        `a request from ${origin.slice(0, 100)} may not change anything here: only pages of ` +
          `${configured ?? ownOrigin(req)} may`,
      );
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  // Only a POST can be sent from another site without asking first: PUT, PATCH and DELETE always ask (CORS preflight).
  if (req.method === 'POST' && (type === '' || formTypes.has(type)) && req.headers[clientHeader] === undefined) {
    return new UnsupportedMediaType(
      `${type === '' ? 'a request without Content-Type' : `Content-Type ${type}`} may not change anything ` +
        `here, as a form on another site could send it: ` +
        'send JSON as application/json, SOAP as text/xml or application/soap+xml, or a request without a body ' +
        'with the X-Requested-With header',
    );
  }
  return undefined;
}

/** The origin the request was sent to: its scheme and Host. */
function ownOrigin(req: IncomingMessage): string {
  const secure = (req.socket as Partial<TLSSocket>).encrypted === true;
  return `${secure ? 'https' : 'http'}://${req.headers.host ?? ''}`;
}

/** Faults that refuse a party (who it is, or what it may do): each is logged with who asked and from where. */
export const refusalCodes = new Set(['NotAuthenticated', 'NotAuthorized', 'FairUseExceeded']);

/** Where a refused request came from and what it presented, for the log line of a refusal. */
export function refusalContext(req: IncomingMessage): { source?: string; forwardedFor?: string; subject?: string } {
  const socket = req.socket as Partial<TLSSocket>;
  const peer =
    socket.encrypted && typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
  const subject = peer?.subject
    ? Object.entries(peer.subject)
        .map(([key, value]) => `/${key}=${String(value)}`)
        .join('')
    : undefined;
  const forwardedFor = req.headers['x-forwarded-for'];
  return {
    ...(req.socket.remoteAddress ? { source: req.socket.remoteAddress } : {}),
    ...(forwardedFor ? { forwardedFor: String(forwardedFor).slice(0, 200) } : {}),
    ...(subject ? { subject } : {}),
  };
}
