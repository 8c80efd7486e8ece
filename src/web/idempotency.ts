import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Agreement } from '../domain/agreement.js';
import { IdempotencyKeyReused, MalformedMessage, UnknownResource } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import type { AgreementService } from '../engine/agreements/index.js';
import { KeyedLock } from '../engine/keyed-lock.js';
import type { IdempotencyRecords, IdSource } from '../engine/ports.js';
import { sendProblem } from './problem.js';

/** How long a key stands for its request. */
export const idempotencyHours = 24;

export interface Idempotency {
  records: IdempotencyRecords;
  ids: IdSource;
  now: () => Date;
}

/** What an idempotent route does: make its agreement (under the id given) and say how it went. */
export interface IdempotentWork {
  /** The agreement the request made already, if it did (a retry after the answer was lost). */
  made(agreementId: string | undefined): Promise<unknown | undefined>;
  /** Makes it; `agreementId` is the id a new agreement takes. */
  make(agreementId: string): Promise<unknown>;
}

/**
 * Creates and accepts that a party may send again (Idempotency-Key, docs/api.md "Retrying
 * safely"): the same key with the same request within 24 hours answers what the first was
 * answered, without making anything again; with another request it is refused by name. The
 * new agreement's id is chosen and stored with the key before it is made, so a retry after a
 * crash between the two finds the agreement instead of making a second. A refusal is not
 * kept: the same request under the same key is decided again. One request per key at a time.
 */
export function idempotent(options: Idempotency) {
  const lock = new KeyedLock();
  return async (req: Request, res: Response, who: Caller, work: IdempotentWork, status: number): Promise<void> => {
    const key = req.get('idempotency-key');
    if (key === undefined) {
      res.status(status).json(await work.make(options.ids.next()));
      return;
    }
    if (key.length === 0 || key.length > 255)
      throw new MalformedMessage(`Idempotency-Key must be 1 to 255 characters; got ${key.length}`);
    const party = who.identity;
    const fingerprint = createHash('sha256')
      .update(`${req.method} ${req.path}\n${typeof req.body === 'string' ? req.body : ''}`)
      .digest('hex');
    await lock.run(`${party}\n${key}`, async () => {
      const now = options.now();
      const kept = await options.records.claim(
        { party, key, fingerprint, agreementId: options.ids.next(), createdAt: now },
        new Date(now.getTime() - idempotencyHours * 3600_000),
      );
      if (kept.fingerprint !== fingerprint)
        throw new IdempotencyKeyReused(
          `Idempotency-Key "${key}" was sent with another request at ${kept.createdAt.toISOString()}; a key ` +
            'stands for one request: send this one under a new key',
        );
      if (kept.answer) {
        res
          .status(kept.answer.status)
          .set('idempotent-replayed', 'true')
          .type('application/json')
          .send(kept.answer.body);
        return;
      }
      const made = await work.made(kept.agreementId);
      const answer = made ?? (await work.make(kept.agreementId ?? options.ids.next()));
      const body = JSON.stringify(answer);
      await options.records.answered(party, key, { status, body });
      res.status(status).type('application/json');
      if (made !== undefined) res.set('idempotent-replayed', 'true');
      res.send(body);
    });
  };
}

/**
 * An Express handler for an idempotent route: `workOf` says, for the caller, how to make the route's agreement and how
 * to find it made; the answer is `status` with it, a failure a problem document naming `what` was being done.
 */
export function idempotentRoute(options: Idempotency, caller: (req: Request) => Caller, logger?: Logger) {
  const once = idempotent(options);
  return (what: string, status: number, workOf: (req: Request, who: Caller) => IdempotentWork) =>
    async (req: Request, res: Response) => {
      try {
        const who = caller(req);
        await once(req, res, who, workOf(req, who), status);
      } catch (error) {
        sendProblem(res, error, what, logger);
      }
    };
}

/** The agreement under `id` if it was made, for its owner; undefined when there is none. */
export function madeAlready(agreements: AgreementService, id: string, who: Caller): Promise<Agreement | undefined> {
  return agreements.get(id, who).catch((error: unknown) => {
    if (error instanceof UnknownResource) return undefined;
    throw error;
  });
}
