import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { MalformedMessage, UnknownResource } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import type { UsageRecording } from '../engine/accounting/index.js';
import { listingQuery, sendListing } from './listing.js';
import { sendProblem } from './problem.js';

/**
 * Usage records under /api/usage (docs/accounting.md, "Usage records"):
 * GET /api/usage lists the caller's records (an operator's: all), paged as every listing;
 * GET /api/usage/AGREEMENT is the OGF Usage Record (GFD.98) document, and
 * GET /api/usage/AGREEMENT?signed=1 its form signed by the provider (when it signs).
 */
export function usageRouter(usage: UsageRecording, caller: (req: Request) => Caller, logger?: Logger): Router {
  const router = express.Router();
  router.get('/api/usage', async (req, res) => {
    try {
      const query = listingQuery(req, []);
      const records = await usage.list(caller(req), { ...query, limit: query.limit + 1 });
      sendListing(
        req,
        res,
        query,
        records.map((r) => ({ ...r, id: r.agreementId })),
        (r) => ({
          agreementId: r.agreementId,
          initiator: r.initiator,
          createdAt: r.createdAt,
          signed: r.signed !== undefined,
        }),
      );
    } catch (error) {
      sendProblem(res, error, 'listing usage records', logger);
    }
  });
  router.get('/api/usage/:id', async (req: Request, res: Response) => {
    try {
      const { signed, ...unknown } = req.query as Record<string, unknown>;
      if (Object.keys(unknown).length > 0 || (signed !== undefined && signed !== '1' && signed !== 'true'))
        throw new MalformedMessage('a usage record takes one query parameter: signed=1');
      const record = await usage.get(String(req.params.id), caller(req));
      if (signed !== undefined && record.signed === undefined)
        throw new UnknownResource(
          'this server does not sign usage records (WSAG_SIGN_AGREEMENTS is off): leave out signed=1',
        );
      res.type('application/xml').send(signed !== undefined ? record.signed : record.xml);
    } catch (error) {
      sendProblem(res, error, 'reading a usage record', logger);
    }
  });
  return router;
}
