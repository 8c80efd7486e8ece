import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { MalformedMessage, MessageTooLarge, UnsupportedMediaType, WsagError } from '../domain/errors.js';
import { contentType } from '../soap/envelope.js';
import { faultEnvelope } from '../soap/fault.js';
import { quoteValue } from '../xml/typed-values.js';
import { sendProblem, statusOf } from './problem.js';

/**
 * The last line of every face: whatever the framework or a handler raised (URL
 * decoding, body reading, charset, decompression, size limits), the caller gets the face's
 * own answer: a problem document under /api, a SOAP Fault of the sent envelope version on
 * a SOAP port, a short plain text elsewhere. Never a stack, a path or the framework's page,
 * whatever NODE_ENV says.
 */
export function errorBoundary(options: {
  soapPaths: readonly string[];
  now: () => Date;
  logger: Logger;
}): ErrorRequestHandler {
  return (raw: unknown, req: Request, res: Response, _next: (error?: unknown) => void) => {
    const error = asWsagError(raw);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // What is left of a refused body is not read: the connection ends with the answer.
    res.set('connection', 'close');
    if (req.path === '/api' || req.path.startsWith('/api/')) {
      sendProblem(res, error, `${req.method} ${req.path}`, options.logger);
      return;
    }
    if (!(error instanceof WsagError)) options.logger.error({ err: raw, path: req.path }, 'request failed');
    if (req.method === 'POST' && options.soapPaths.includes(req.path)) {
      const version = (req.headers['content-type'] ?? '').includes('application/soap+xml') ? '1.2' : '1.1';
      const fault = faultEnvelope(version, error, options.now());
      res.status(fault.status).type(contentType(version)).send(fault.xml);
      return;
    }
    const status = error instanceof WsagError ? statusOf(error) : 500;
    res
      .status(status)
      .type('text/plain')
      .send(
        error instanceof WsagError && error.exposable
          ? `${error.code}: ${error.message}\n`
          : 'InternalError: the request failed; the failure is logged\n',
      );
  };
}

/**
 * Refuses a body whose declared Content-Length is over `limit` before any body parser
 * runs: Express's parsers read off the whole body before they fail, so a client that
 * announces 50 MB and sends a few bytes would hold the answer until the request times out.
 */
export function declaredBodyWithin(limit: number): RequestHandler {
  return (req, _res, next) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit)
      next(
        new MessageTooLarge(
          `request body is declared as ${declared} bytes (Content-Length); the limit is ${limit} bytes`,
        ),
      );
    else next();
  };
}

/** A framework error (Express, body-parser, the router's URL decoding) as the fault it is. */
export function asWsagError(error: unknown): unknown {
  if (error instanceof WsagError) return error;
  const e = (error ?? {}) as {
    status?: number;
    type?: string;
    charset?: string;
    encoding?: string;
    limit?: number;
    length?: number;
    message?: string;
  };
  if (error instanceof URIError)
    return new MalformedMessage(
      `the URL holds a malformed ` +
        `percent-encoding${e.message ? ` (${quoteValue(e.message.replace(/^Failed to decode param /, ''))})` : ''}`,
    );
  switch (e.type) {
    case 'entity.too.large':
      return new MessageTooLarge(
        `request body is ${e.length ?? 'more than the limit of'} bytes; the limit is ${e.limit} bytes`,
      );
    case 'charset.unsupported':
      return new UnsupportedMediaType(`charset ${quoteValue(String(e.charset ?? ''))} is not supported: send UTF-8`);
    case 'encoding.unsupported':
      return new UnsupportedMediaType(
        `Content-Encoding ${quoteValue(String(e.encoding ?? ''))} is not supported: send the body ` +
          `uncompressed, gzip or deflate`,
      );
    case 'entity.parse.failed':
      return new MalformedMessage('the body is not valid JSON');
    case 'request.aborted':
    case 'request.size.invalid':
      return new MalformedMessage('the request body ended before the length its Content-Length declared');
  }
  // Other 4xx of the body reader: a body that does not decompress, a stream error.
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new MalformedMessage(`the request body could not be read${e.message ? ` (${quoteValue(e.message)})` : ''}`);
  }
  return error;
}
