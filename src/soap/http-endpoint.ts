import fs from 'node:fs';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import path from 'node:path';
import type { Router } from 'express';
import express from 'express';
import type { Logger } from 'pino';
import { ActionNotSupported, MessageTooLarge, NotAuthenticated, WsagError } from '../domain/errors.js';
import { crossSiteRefusal, dataHeaders, refusalCodes, refusalContext } from './http-safety.js';
import type { Caller } from '../domain/identity.js';
import type { SeenSignatures } from '../engine/ports.js';
import { signedMessageOf } from './authentication.js';
import { schemasDir } from '../xml/libxml.js';
import { ns } from '../xml/namespaces.js';
import { guardRawXml, type LastChildOutline } from '../xml/raw-guard.js';
import {
  addressingAction,
  addressingHeaders,
  addressingOf,
  checkAddressing,
  type ReplyAddressing,
} from './addressing.js';
import { contentType, envelope, type SoapRequest, type SoapVersion } from './envelope.js';
import { fairStart } from './fair-start.js';
import { faultEnvelope, isAddressingFault } from './fault.js';
import { checkMustUnderstand } from './must-understand.js';
import { addressingFaultAction, faultAction, type Operation, type Port } from './operation.js';
import { likelySoapVersion, soapVersionOf, utf8Body } from './request-encoding.js';
import { readRequest } from './request-envelope.js';
import { requestsInProgress } from './requests-in-progress.js';
import { servedWsdl, wsdlViewOf } from './wsdl-view.js';

export { addressPlaceholder } from './wsdl-view.js';

export const wsdlDir = path.resolve(schemasDir, '../wsdl');

export interface EndpointOptions {
  ports: Port[];
  maxBodyBytes: number;
  maxXmlDepth: number;
  /** Public base URL of the server, e.g. http://127.0.0.1:8080 (no trailing slash). */
  baseUrl: (req?: IncomingMessage) => string;
  /** Who sent the request (TLS client certificate, WS-Security signature, or anonymous); throws NotAuthenticated. */
  identify: (req: IncomingMessage, soap: SoapRequest | undefined, now: Date) => Caller;
  /**
   * Signatures already received: a signed message is refused the second time. Absent: not checked (tests of other
   * things).
   */
  seenSignatures?: SeenSignatures;
  now: () => Date;
  logger: Logger;
  /**
   * Told of every SOAP request once answered (metrics): its port, operation (when known),
   * outcome (ok or the fault code), seconds, and the seconds it waited to start once its
   * body had arrived (absent when it was refused before).
   */
  onRequest?: (done: {
    port: string;
    operation: string;
    outcome: string;
    seconds: number;
    startWaitSeconds?: number;
  }) => void;
  /**
   * Whether a Body read now would be read on another thread (DocumentThreads): only then is
   * the operation element's content left out of the event loop's parse (readRequest).
   */
  bodiesReadElsewhere?: () => boolean;
}

/**
 * The SOAP face: each port answers at exactly its own path (never a fallback to another
 * port), GET `?wsdl` serves its WSDL (`&soap=1.1` or `1.2`: one binding only), GET /schemas/
 * serves the XSDs the WSDLs import. The raw body is guarded (size, depth, no DTD) before any XML parser sees it.
 */
export function soapRouter(options: EndpointOptions): Router {
  const router = express.Router();
  router.get('/schemas/:file', (req, res) => {
    const file = req.params.file;
    if (!/^[\w.-]+\.xsd$/.test(file) || !fs.existsSync(path.join(schemasDir, file))) {
      res.status(404).type('text/plain').send('no such schema\n');
      return;
    }
    res.type('application/xml').sendFile(path.join(schemasDir, file));
  });
  for (const port of options.ports) {
    router.get(port.path, (req, res) => {
      if (!Object.keys(req.query).some((k) => k.toLowerCase() === 'wsdl')) {
        res
          .status(405)
          .type('text/plain')
          .send(`${port.name} speaks SOAP: POST an envelope, or GET ${port.path}?wsdl\n`);
        return;
      }
      const view = wsdlViewOf(req.query.soap);
      if (typeof view === 'object') {
        res.status(400).type('text/plain').send(`${view.problem}\n`);
        return;
      }
      res.type('application/xml').send(servedWsdl(wsdlDir, port.wsdlFile, view, options.baseUrl(req)));
    });
    router.post(port.path, (req, res) => {
      void handleSoap(port, req, res, options);
    });
    router.all(port.path, (req, res) => {
      res.set('allow', 'GET, POST');
      if (req.method === 'OPTIONS') res.status(204).end();
      else
        res
          .status(405)
          .type('text/plain')
          .send(
            `MethodNotAllowed: ${port.name} answers POST (a SOAP envelope) and GET ${port.path}?wsdl, not ` +
              `${req.method}\n`,
          );
    });
  }
  return router;
}

/**
 * SOAP POSTs go straight to their port, ahead of `rest` (the express application): through
 * express a broker's request walked every route of the JSON API first, with closures and
 * matches per route; at 16 concurrent creates much of that outlived a young-generation
 * cycle and was promoted. Other requests, and POSTs to a path that is not exactly a port's
 * (another case, a query, a trailing slash), go to `rest`, whose SOAP router answers them alike.
 */
export function soapPostsFirst(options: EndpointOptions, rest: RequestListener): RequestListener {
  const ports = new Map(options.ports.map((port) => [port.path, port]));
  return (req, res) => {
    req.url = normalisedPath(req.url);
    const port = req.method === 'POST' ? ports.get(req.url ?? '') : undefined;
    if (port) void handleSoap(port, req, res, options);
    else rest(req, res);
  };
}

/**
 * The request's path with "." and ".." segments resolved (RFC 3986 section 5.2.4): some
 * toolkits join a WSDL's relative schema location (../schemas/x.xsd) to its URL without
 * resolving it, and ask for /wsag/../schemas/x.xsd. The query is kept as sent.
 */
export function normalisedPath(url: string | undefined): string | undefined {
  if (url === undefined || !url.startsWith('/')) return url;
  const query = url.indexOf('?');
  const pathPart = query < 0 ? url : url.slice(0, query);
  if (!/(^|\/)\.\.?(\/|$)/.test(pathPart)) return url;
  const resolved = path.posix.normalize(pathPart);
  return resolved + (query < 0 ? '' : url.slice(query));
}

async function handleSoap(
  port: Port,
  req: IncomingMessage,
  res: ServerResponse,
  options: EndpointOptions,
): Promise<void> {
  const started = process.hrtime.bigint();
  let version: SoapVersion = likelySoapVersion(req);
  let operation: Operation | undefined;
  // Read while the request's document lives: a fault is written after it is disposed.
  let replyAddressing: ReplyAddressing | undefined;
  let caller: Caller | undefined;
  let outcome = 'ok';
  let startWaitSeconds: number | undefined;
  requestsInProgress.count++;
  try {
    const crossSite = crossSiteRefusal(req, () => new URL(options.baseUrl(req)).origin);
    if (crossSite) throw crossSite;
    version = soapVersionOf(req);
    const body = utf8Body(req, await readBody(req, options.maxBodyBytes));
    const arrived = performance.now();
    await fairStart.turn();
    startWaitSeconds = (performance.now() - arrived) / 1000;
    const outline: LastChildOutline = { children: 0 };
    const text = guardRawXml(body, { maxBytes: options.maxBodyBytes, maxDepth: options.maxXmlDepth }, outline);
    // The guard found the bytes to be UTF-8 and returned them decoded: libxml2 reads the bytes.
    const received = readRequest(
      body,
      text,
      outline,
      (namespace, element) =>
        options.bodiesReadElsewhere?.() === true &&
        port.operations.some((o) => o.readsBodyFromText && o.namespace === namespace && o.element === element),
    );
    try {
      const { request } = received;
      version = request.version;
      replyAddressing = addressingOf(request.headers);
      checkMustUnderstand(request);
      checkAddressing(request.headers);
      checkAddressedHere(req, request.headers, port.path, options.baseUrl(req));
      operation = selectOperation(
        port,
        received.operation.namespaceUri,
        received.operation.name,
        soapAction(req, version),
        addressingAction(request.headers),
      );
      const now = options.now();
      caller = options.identify(req, request, now);
      await usedOnce(req, options.seenSignatures, now);
      const responseBody = await operation.handle({ request, caller, baseUrl: options.baseUrl(req), now });
      const headers = addressingHeaders(replyAddressing, operation.responseAction);
      sendEnvelope(res, 200, version, envelope(version, responseBody, headers));
    } finally {
      received.dispose();
    }
  } catch (error) {
    outcome = error instanceof WsagError ? error.code : 'InternalError';
    // A body refused before it was read whole is not read on: the connection ends with the answer.
    if (!req.complete) res.setHeader('connection', 'close');
    if (!(error instanceof WsagError) || !error.exposable)
      options.logger.error({ err: error, port: port.name }, 'request failed');
    else if (refusalCodes.has(error.code))
      options.logger.warn(
        { port: port.name, refused: error.code, reason: error.message, ...refusalContext(req) },
        'soap request refused',
      );
    // A fault answers in the request's addressing as a reply does (WS-Addressing 1.0 Core, section 3.4).
    const action = operation && !isAddressingFault(error) ? faultAction(port, operation) : addressingFaultAction;
    const addressing = replyAddressing ? addressingHeaders(replyAddressing, action) : '';
    const fault = faultEnvelope(version, error, options.now(), addressing);
    sendEnvelope(res, fault.status, version, fault.xml);
  } finally {
    requestsInProgress.count--;
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    options.logger.info(
      { port: port.name, operation: operation?.name, caller: caller?.identity, outcome, ms: Math.round(ms * 10) / 10 },
      'soap',
    );
    options.onRequest?.({
      port: port.name,
      operation: operation?.name ?? 'unknown',
      outcome,
      seconds: ms / 1000,
      ...(startWaitSeconds !== undefined ? { startWaitSeconds } : {}),
    });
  }
}

/**
 * Writes a SOAP answer with node:http itself: express's send would hash every envelope for
 * an ETag (and test freshness), which answers to POSTs never use.
 */
function sendEnvelope(res: ServerResponse, status: number, version: SoapVersion, xml: string): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(dataHeaders)) res.setHeader(name, value);
  res.setHeader('content-type', contentType(version));
  res.setHeader('content-length', Buffer.byteLength(xml, 'utf8'));
  res.end(xml, 'utf8');
}

/** Dispatch by the Body element's QName; a SOAPAction or wsa:Action, when sent, must be the operation's own. */
function selectOperation(
  port: Port,
  namespace: string,
  local: string,
  action: string | undefined,
  wsaAction: string | undefined,
): Operation {
  const operation = port.operations.find((o) => o.namespace === namespace && o.element === local);
  if (!operation) {
    const known = port.operations.map((o) => `{${o.namespace}}${o.element}`).join(', ');
    throw new ActionNotSupported(
      `${port.name} has no operation for {${namespace}}${local}; it accepts ${known}`,
      wsaAction,
    );
  }
  if (action && action !== operation.action) {
    throw new ActionNotSupported(
      `SOAPAction "${action}" does not match ${operation.name}, whose action is "${operation.action}"`,
    );
  }
  if (wsaAction && wsaAction !== operation.action) {
    throw new ActionNotSupported(
      `wsa:Action "${wsaAction}" does not match ${operation.name}, whose action is "${operation.action}"`,
      wsaAction,
    );
  }
  return operation;
}

function soapAction(req: IncomingMessage, version: SoapVersion): string | undefined {
  if (version === '1.1') {
    const header = req.headers.soapaction;
    const value = (Array.isArray(header) ? header[0] : header)?.trim().replace(/^"(.*)"$/, '$1');
    return value || undefined;
  }
  const m = /action\s*=\s*"?([^";]+)"?/.exec(req.headers['content-type'] ?? '');
  return m?.[1];
}

/**
 * A signed message counts once: the same signature again is a replay (its digest is kept until the message expires).
 */
async function usedOnce(req: IncomingMessage, seen: SeenSignatures | undefined, now: Date): Promise<void> {
  const signed = signedMessageOf(req);
  if (!signed || !seen) return;
  if (!(await seen.firstSeen(signed.signatureDigest, signed.acceptableUntil, now))) {
    throw new NotAuthenticated(
      'WS-Security: this signed message was received already: each signature is used once; sign the request ' +
        'again to send it again',
    );
  }
}

/**
 * A message counts only where it was sent: its wsa:To, when present, and always when it is
 * signed (so a captured message cannot be posted to another provider, or here from one), is
 * this port at this server's address: the one the request came in on, or the public one.
 */
function checkAddressedHere(
  req: IncomingMessage,
  headers: { namespaceUri: string; name: string; content: string }[],
  portPath: string,
  baseUrl: string,
): void {
  const to = headers.find((h) => h.namespaceUri === ns.wsa && h.name === 'To')?.content.trim();
  const signed = headers.some((h) => h.namespaceUri === ns.wsse && h.name === 'Security');
  if (to === undefined) {
    if (signed)
      throw new NotAuthenticated(
        `a signed message must name its destination in a signed wsa:To header: ${baseUrl}${portPath}`,
      );
    return;
  }
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true;
  const here = new Set([
    `${secure ? 'https' : 'http'}://${req.headers.host ?? ''}${portPath}`,
    `${baseUrl}${portPath}`,
  ]);
  if (!here.has(to))
    throw new NotAuthenticated(
      `the message is addressed to ${to.slice(0, 200)} (wsa:To), not to this port (${baseUrl}${portPath}): a ` +
        `message counts only where it was sent`,
    );
}

/**
 * Reads at most `limit` bytes. A larger body is refused without buffering it: the rest is
 * drained (so the client reads our fault instead of a reset) up to a hard cap, then the
 * connection is dropped.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    // Refused on the declaration alone: the server does not wait for a body it would refuse.
    if (declared > limit) {
      reject(
        new MessageTooLarge(
          `request body is declared as ${declared} bytes (Content-Length); the limit is ${limit} bytes`,
        ),
      );
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    const drainCap = limit * 64;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
      else if (size > drainCap) req.destroy();
    });
    const refuse = () =>
      reject(new MessageTooLarge(`request body is ${size} bytes or more; the limit is ${limit} bytes`));
    req.on('end', () => (tooLarge ? refuse() : resolve(Buffer.concat(chunks))));
    req.on('error', reject);
    // A destroyed request never ends: settle anyway (a settled promise ignores later calls).
    req.on('close', () =>
      req.complete ? undefined : tooLarge ? refuse() : reject(new Error('client closed the connection mid-request')),
    );
  });
}
