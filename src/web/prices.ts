import express, { type Request, type Router } from 'express';
import type { Logger } from 'pino';
import { InvalidTerms } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import { demandFactor, levelFactor, type PriceList } from '../domain/pricing.js';
import type { PlanningService } from '../engine/planning/index.js';
import { sendProblem } from './problem.js';

/**
 * GET /api/prices (any authenticated caller): the published price list (docs/pricing.md):
 * the node-hour list price, the factor per guarantee level, the price curve, and the
 * outlook: for each period ahead (`?hours=` of them, default 24, `?period=` seconds each,
 * default 3600) the plan's load and the curve's factor, so a flexible customer can pick a
 * cheaper period.
 */
export function pricesRouter(
  prices: PriceList,
  plan: Pick<PlanningService, 'load'>,
  caller: (req: Request) => Caller,
  now: () => Date,
  logger?: Logger,
): Router {
  const router = express.Router();
  router.get('/api/prices', (req, res) => {
    try {
      caller(req);
      const periods = whole(req.query.hours, 'hours', 24, 1, 24 * 31);
      const seconds = whole(req.query.period, 'period', 3600, 60, 7 * 86_400);
      const from = Math.floor(now().getTime() / 1000 / seconds) * seconds * 1000;
      const outlook = Array.from({ length: periods }, (_, i) => {
        const start = new Date(from + i * seconds * 1000);
        const end = new Date(start.getTime() + seconds * 1000);
        const load = plan.load(start, end);
        const factor = demandFactor(prices.curve, load);
        return {
          start: start.toISOString(),
          end: end.toISOString(),
          load: round(load, 4),
          factor: round(factor, 4),
          nodeHour: round(prices.nodeHour * factor, 4),
        };
      });
      res.json({
        currency: prices.currency,
        nodeHour: prices.nodeHour,
        preparatoryFeeRate: prices.preparatoryFeeRate,
        levelFactors: levelFactor,
        curve: prices.curve ?? [],
        outlook,
      });
    } catch (error) {
      sendProblem(res, error, 'reading the prices', logger);
    }
  });
  return router;
}

function whole(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value) || n < min || n > max)
    throw new InvalidTerms(`?${name}= must be a whole number from ${min} to ${max}, got "${String(value)}"`);
  return n;
}

function round(x: number, digits: number): number {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}
