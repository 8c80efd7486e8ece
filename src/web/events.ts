import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { Caller } from '../domain/identity.js';
import type { AgreementChange } from '../engine/agreements/index.js';
import type { ReplanCause } from '../engine/planning/index.js';
import { problemOf, sendProblem } from './problem.js';

/** Open event streams at most: each holds a socket for as long as its page is open. */
export const maxEventStreams = 256;

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

  constructor(private readonly maxStreams = maxEventStreams) {}

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
      if (this.clients.size >= this.maxStreams) {
        const problem = problemOf('TooManyStreams', 503, `${this.maxStreams} event streams are open, the most this server keeps: close a dashboard, or try again later`);
        res.status(503).set('retry-after', '30').type('application/problem+json').send(JSON.stringify(problem));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
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
