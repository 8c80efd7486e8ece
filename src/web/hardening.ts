import type { RequestHandler } from 'express';
import type { IncomingMessage } from 'node:http';
import { crossSiteRefusal, dataHeaders } from '../soap/http-safety.js';

/**
 * Headers that keep what the server sends from being turned against its users
 * (docs/security.md, "Documents never execute"). The dashboard (/ui) may run its own scripts
 * and styles and talk to this server only; everything else (the API, stored agreement, offer
 * and usage documents, reports, WSDLs) is data (src/soap/http-safety.ts): sandboxed, so a
 * document that carries markup never runs as a page of this origin.
 */
const dashboardPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function hardeningHeaders(): RequestHandler {
  return (req, res, next) => {
    for (const [name, value] of Object.entries(dataHeaders)) res.setHeader(name, value);
    if (req.path === '/ui' || req.path.startsWith('/ui/')) res.setHeader('Content-Security-Policy', dashboardPolicy);
    next();
  };
}

/**
 * No cross-site writes (src/soap/http-safety.ts, `crossSiteRefusal`): the refusal goes to the error boundary, which
 * answers it as the face does.
 */
export function crossSiteGuard(publicOrigin: (req: IncomingMessage) => string | undefined): RequestHandler {
  return (req, _res, next) => next(crossSiteRefusal(req, () => publicOrigin(req)));
}
