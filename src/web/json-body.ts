import express, { type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { MalformedMessage } from '../domain/errors.js';
import { declaredBodyWithin } from './error-boundary.js';
import { sendProblem } from './problem.js';

/** The middleware of a small JSON request body (at most 16 KiB), read as text so a wrong body is answered by name. */
export const smallBody = [declaredBodyWithin(16 * 1024), express.text({ type: () => true, limit: 16 * 1024 })];

/** The request body as a JSON object; a body that is not one is refused as malformed. */
export function jsonBody(req: Request): Record<string, unknown> {
  try {
    const value = JSON.parse(typeof req.body === 'string' ? req.body : '') as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new MalformedMessage('send a JSON object as the body');
}

/** The middleware of a body of at most `maxBytes` (an offer document may come whole), read as text. */
export const bodyWithin = (maxBytes: number) => [
  declaredBodyWithin(maxBytes),
  express.text({ type: () => true, limit: maxBytes }),
];

/**
 * A handler that answers what `produce` gives as JSON with `status` (204 when it gives nothing), and a failure as a
 * problem document naming `what` was being done.
 */
export const jsonAnswer =
  (logger: Logger | undefined) =>
  (what: string, produce: (req: Request) => Promise<unknown> | unknown, status = 200) =>
  async (req: Request, res: Response) => {
    try {
      const result = await produce(req);
      if (result === undefined) res.status(204).end();
      else res.status(status).json(result);
    } catch (error) {
      sendProblem(res, error, what, logger);
    }
  };
