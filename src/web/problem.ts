import type { Response } from 'express';
import type { Logger } from 'pino';
import { WsagError } from '../domain/errors.js';
import { refusalCodes, refusalContext } from '../soap/http-safety.js';

/**
 * The /api face's one way to fail: an RFC 9457 problem document (application/problem+json)
 * whose `type` names the fault (docs/faults.md), `title` is its code and `detail` says what
 * was wrong. `error` and `message` repeat code and detail for clients written against the
 * earlier { error, message } answers. Errors that are not WsagErrors never show their text.
 */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  error: string;
  message: string;
  /** The technical text behind a plain detail (a schema validator's own words). */
  technicalDetail?: string;
}

export const problemType = (code: string) => `https://schemas.wsag-server.org/2026/11/faults#${code}`;

export function statusOf(error: WsagError): number {
  switch (error.code) {
    case 'NotAuthenticated':
      return 401;
    case 'NotAuthorized':
      return 403;
    case 'UnknownResource':
      return 404;
    case 'MethodNotAllowed':
      return 405;
    case 'MessageTooLarge':
      return 413;
    case 'UnsupportedMediaType':
      return 415;
    case 'InvalidStateTransition':
      return 409;
    case 'IdempotencyKeyReused':
      return 422;
    case 'FairUseExceeded':
      return 429;
    case 'ServiceUnavailable':
      return 503;
    default:
      return error.isClientError ? 400 : 409;
  }
}

export function problemOf(code: string, status: number, detail: string): Problem {
  return { type: problemType(code), title: code, status, detail, error: code, message: detail };
}

/** A schema validator's own words, where the detail says the same in plain ones. */
function withTechnicalDetail(problem: Problem, error: WsagError): Problem {
  return error.technicalDetail === undefined ? problem : { ...problem, technicalDetail: error.technicalDetail };
}

/** Answers `error` as a problem document; a failure of our own is logged and answered as InternalError. */
export function sendProblem(res: Response, error: unknown, what: string, logger?: Logger): void {
  const problem =
    error instanceof WsagError && error.exposable
      ? withTechnicalDetail(problemOf(error.code, statusOf(error), error.message), error)
      : problemOf('InternalError', 500, `${what} failed; see the server log`);
  if (problem.status === 500) logger?.error({ err: error }, `${what} failed`);
  if (refusalCodes.has(problem.error) && res.req)
    logger?.warn(
      {
        refused: problem.error,
        reason: problem.detail,
        method: res.req.method,
        path: res.req.path,
        ...refusalContext(res.req),
      },
      `${what} refused`,
    );
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}
