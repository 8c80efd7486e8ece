import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { MalformedMessage } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import type { AccountService, NewAccount } from '../engine/accounting/index.js';
import { jsonBody, smallBody } from './json-body.js';
import { knownQuery, maxPageSize, pageLimit } from './listing.js';
import { sendProblem } from './problem.js';

/**
 * The bank under /api/accounts (docs/accounting.md): operators create accounts
 * (POST /api/accounts) and credit them (POST /api/accounts/ID/deposits and /allocations,
 * with an optional "key" that makes a retry safe); owners, members and operators read an
 * account (GET /api/accounts/ID) and its statement (GET /api/accounts/ID/statement);
 * GET /api/accounts lists the accounts the caller may read.
 * Statements come a page at a time (`?limit=`, `?after=`; `next` and a Link header say where
 * the next page starts).
 */
export function accountsRouter(accounts: AccountService, caller: (req: Request) => Caller, logger?: Logger): Router {
  const router = express.Router();
  const body = smallBody;
  const json =
    (what: string, produce: (req: Request) => Promise<unknown>, status = 200) =>
    async (req: Request, res: Response) => {
      try {
        res.status(status).json(await produce(req));
      } catch (error) {
        sendProblem(res, error, what, logger);
      }
    };
  router.get(
    '/api/accounts',
    json('listing accounts', async (req) => ({ accounts: await accounts.list(caller(req)) })),
  );
  router.post(
    '/api/accounts',
    ...body,
    json(
      'creating an account',
      async (req) => accounts.create(jsonBody(req) as unknown as NewAccount, caller(req)),
      201,
    ),
  );
  router.get(
    '/api/accounts/:id',
    json('reading an account', async (req) => accounts.get(String(req.params.id), caller(req))),
  );
  router.get('/api/accounts/:id/statement', async (req, res) => {
    try {
      const page = statementPage(req);
      const statement = await accounts.statement(String(req.params.id), caller(req), page);
      if (statement.next !== undefined) {
        res.set('link', `<${req.baseUrl}${req.path}?${nextPage(page.limit, statement.next)}>; rel="next"`);
      }
      res.status(200).json(statement);
    } catch (error) {
      sendProblem(res, error, 'reading a statement', logger);
    }
  });
  for (const [path, kind] of [
    ['deposits', 'deposit'],
    ['allocations', 'allocation'],
  ] as const) {
    router.post(
      `/api/accounts/:id/${path}`,
      ...body,
      json(`crediting an account`, async (req) => {
        const input = jsonBody(req);
        const amount = input.amount;
        if (typeof amount !== 'number')
          throw new MalformedMessage(
            `send { "amount": number, "note"?: string, "key"?: string }: "amount" is ` +
              `${amount === undefined ? 'missing' : 'not a number'}`,
          );
        return accounts.credit(
          String(req.params.id),
          kind,
          amount,
          caller(req),
          typeof input.note === 'string' ? input.note : '',
          typeof input.key === 'string' ? input.key : undefined,
        );
      }),
    );
  }
  return router;
}

/**
 * `?limit=` (1 to 1000, default 1000) and `?after=` (the seq of the last entry read, as the
 * `next` of the previous page and its Link rel="next" header give it): a statement is read
 * a page at a time, so its cost does not grow with the account's history.
 */
function statementPage(req: Request): { afterSeq?: number; limit: number } {
  const { limit: rawLimit, after: rawAfter } = knownQuery(req, ['limit', 'after'], 'a statement takes limit and after');
  const page: { afterSeq?: number; limit: number } = { limit: pageLimit(rawLimit, maxPageSize) };
  if (rawAfter !== undefined) {
    if (!(typeof rawAfter === 'string' && /^\d{1,15}$/.test(rawAfter)))
      throw new MalformedMessage(
        "after must be the seq of a statement entry (a whole number), as the next page's link gives it",
      );
    page.afterSeq = Number(rawAfter);
  }
  return page;
}

function nextPage(limit: number, after: number | string): string {
  return new URLSearchParams({ limit: String(limit), after: String(after) }).toString();
}
