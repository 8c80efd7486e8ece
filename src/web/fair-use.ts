import express, { type Request, type Router } from 'express';
import type { Logger } from 'pino';
import type { Caller } from '../domain/identity.js';
import type { FairUseStanding } from '../engine/fair-use/index.js';
import { sendProblem } from './problem.js';

/**
 * GET /api/fair-use (any authenticated caller): the site's fair-use limits and what the
 * caller holds against each (docs/security.md, "Fair use"); `{ "enabled": false }` when
 * the site has none. Operators see their own holdings (they are exempt).
 */
export function fairUseRouter(
  standing: ((party: string) => Promise<FairUseStanding>) | undefined,
  caller: (req: Request) => Caller,
  logger?: Logger,
): Router {
  const router = express.Router();
  router.get('/api/fair-use', async (req, res) => {
    try {
      const who = caller(req);
      if (!standing) {
        res.json({ enabled: false, party: who.identity });
        return;
      }
      res.json({ enabled: true, exempt: who.isAdmin, ...(await standing(who.identity)) });
    } catch (error) {
      sendProblem(res, error, 'reading the fair-use limits', logger);
    }
  });
  return router;
}
