import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { Caller } from '../domain/identity.js';
import type { AgreementChange } from '../engine/agreements/index.js';
import type { ReplanCause } from '../engine/planning/index.js';
import { problemOf, sendProblem } from './problem.js';

/** Open event streams at most: each holds a socket for as long as its page is open. */
export const maxEventStreams = 256;
/**
 * Open event streams at most per party, so no one party takes them all (operators are not counted against either
 * limit).
 */
export const maxEventStreamsPerParty = 8;

/** What the dashboard is told: an agreement changed, or the plan was re-planned. */
export type DashboardEvent =
  | { kind: 'agreement'; id: string; state: string }
  | { kind: 'replan'; cause: ReplanCause; moved: string[] };

/**
 * GET /api/events: server-sent events for the dashboard (docs/operations.md, "Dashboard"),
 * so its views update live. The same rules as the API: an agreement's changes go to its
 * initiator and to operators; re-plans (they show everyone's bookings) to operators only.
 */
export class EventStream {
  private readonly clients = new Set<{ res: Response; caller: Caller }>();

  constructor(
    private readonly maxStreams = maxEventStreams,
    private readonly maxPerParty = maxEventStreamsPerParty,
  ) {}

  router(caller: (req: Request) => Caller, logger?: Logger): Router {
    const router = express.Router();
    router.get('/api/events', (req, res) => {
      let who: Caller;
      try {
        who = caller(req);
      } catch (error) {
        sendProblem(res, error, 'following events', logger);
        return;
      }
      const refusal = who.isAdmin ? undefined : this.refusal(who);
      if (refusal) {
        res
          .status(refusal.status)
          .set('retry-after', '30')
          .type('application/problem+json')
          .send(JSON.stringify(refusal));
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      });
      res.write(': following the plan and agreements\n\n');
      const client = { res, caller: who };
      this.clients.add(client);
      // A comment now and then keeps proxies from closing an idle stream.
      const keepAlive = setInterval(() => res.write(': still here\n\n'), 25_000);
      keepAlive.unref();
      req.on('close', () => {
        clearInterval(keepAlive);
        this.clients.delete(client);
      });
    });
    return router;
  }

  /**
   * Why `who` may not open another stream: one party's limit first (429), then the server's (503), counting parties'
   * streams only.
   */
  private refusal(who: Caller) {
    const parties = [...this.clients].filter((c) => !c.caller.isAdmin);
    const own = parties.filter((c) => c.caller.identity === who.identity).length;
    if (own >= this.maxPerParty)
      return problemOf(
        'TooManyStreams',
        429,
        `${who.identity} has ${own} event streams open, the most one party keeps: close a dashboard first`,
      );
    if (parties.length >= this.maxStreams)
      return problemOf(
        'TooManyStreams',
        503,
        `${this.maxStreams} event streams are open, the most this server keeps: close a dashboard, or try again later`,
      );
    return undefined;
  }

  agreementChanged(change: AgreementChange): void {
    const { id, state, initiator } = change.after;
    this.send({ kind: 'agreement', id, state }, (who) => who.isAdmin || who.identity === initiator);
  }

  replanned(cause: ReplanCause, moved: string[]): void {
    this.send({ kind: 'replan', cause, moved }, (who) => who.isAdmin);
  }

  private send(event: DashboardEvent, mayKnow: (who: Caller) => boolean): void {
    const line = `event: ${event.kind}\ndata: ${JSON.stringify(event)}\n\n`;
    for (const client of this.clients) if (mayKnow(client.caller)) client.res.write(line);
  }
}
