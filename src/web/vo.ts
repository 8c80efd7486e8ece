import express, { type Request, type Router } from 'express';
import type { Logger } from 'pino';
import { NotAuthorized } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import type { VoUsage } from '../engine/accounting/index.js';
import { sendProblem } from './problem.js';

/**
 * GET /api/vo (operators): the site's VO usage SLAs in the current epoch, each VO, group
 * and user with its limit, share, entitlement and what is used or booked (node-hours); a
 * site without a usage policy says so (`{ "policy": false }`).
 */
export function voRouter(
  shares: Pick<VoUsage, 'standings'> | undefined,
  caller: (req: Request) => Caller,
  now: () => Date,
  logger?: Logger,
): Router {
  const router = express.Router();
  router.get('/api/vo', (req, res) => {
    try {
      if (!caller(req).isAdmin)
        throw new NotAuthorized("the VO shares show every VO's usage: operators (WSAG_ADMINS) only");
      if (!shares) {
        res.json({ policy: false, shares: [] });
        return;
      }
      const { epoch, shares: list } = shares.standings(now());
      const hours = (seconds: number) => Math.round(seconds / 36) / 100;
      res.json({
        policy: true,
        epoch: { start: new Date(epoch.start).toISOString(), end: new Date(epoch.end).toISOString() },
        shares: list.map((s) => ({
          path: s.path,
          level: s.level,
          limit: s.limit,
          share: s.share,
          entitledNodeHours: hours(s.entitled),
          usedNodeHours: hours(s.used),
        })),
      });
    } catch (error) {
      sendProblem(res, error, 'reading the VO shares', logger);
    }
  });
  return router;
}
