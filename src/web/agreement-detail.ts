import express, { type Request, type Router } from 'express';
import type { Logger } from 'pino';
import type { Agreement } from '../domain/agreement.js';
import { MalformedMessage, UnknownResource } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import type { VerdictCorrections } from '../engine/accounting/index.js';
import type { AgreementService } from '../engine/agreements/index.js';
import type { AgreementSignatureVerifier, AuditEntry } from '../engine/ports.js';
import { jsonBody, smallBody } from './json-body.js';
import { sendProblem } from './problem.js';
import { agreementSummary } from './summaries.js';

/**
 * GET /api/agreements/ID: one agreement in full, for its owner, its eligible parties and
 * operators (the dashboard's detail view): its summary, term states, what was asked, the
 * allocation with its pieces, the audit history and whether its signatures verify now.
 * POST /api/agreements/ID/corrections: an operator corrects a false violation.
 */
export function agreementDetailRouter(
  deps: {
    agreements: AgreementService;
    history?: (id: string) => Promise<AuditEntry[]>;
    signatures?: AgreementSignatureVerifier;
    corrections?: VerdictCorrections;
    now: () => Date;
  },
  caller: (req: Request) => Caller,
  logger?: Logger,
): Router {
  const router = express.Router();
  router.get('/api/agreements/:id', async (req, res) => {
    try {
      const agreement = await deps.agreements.get(String(req.params.id), caller(req));
      const history = deps.history ? await deps.history(agreement.id) : [];
      res.json({
        ...agreementSummary(agreement),
        serviceTerms: agreement.serviceTerms,
        guaranteeTerms: agreement.guaranteeTerms,
        request: agreement.request,
        allocation: agreement.allocation,
        history: history.map((e) => ({ seq: e.seq, at: e.at, actor: e.actor, action: e.action, details: e.details })),
        signatures: signatures(agreement, deps.signatures, deps.now()),
      });
    } catch (error) {
      sendProblem(res, error, 'reading an agreement', logger);
    }
  });
  // An operator corrects a false violation: { "term": ..., "reason": ... } (docs/operations.md, "Correcting a false
  // violation").
  router.post('/api/agreements/:id/corrections', ...smallBody, async (req, res) => {
    try {
      if (!deps.corrections)
        throw new UnknownResource('this server keeps no post-runtime reports to correct (WSAG_EXECUTOR=none)');
      const input = jsonBody(req);
      if (typeof input.term !== 'string' || input.term === '')
        throw new MalformedMessage(
          'send { "term": the guarantee term\'s name, "reason": why the violation was false }: "term" is missing',
        );
      res.json(await deps.corrections.correct(String(req.params.id), input.term, input.reason, caller(req)));
    } catch (error) {
      sendProblem(res, error, 'correcting a guarantee verdict', logger);
    }
  });
  return router;
}

/** Whether the agreement is signed, and by whom, checked now against the trusted CAs. */
function signatures(agreement: Agreement, verifier: AgreementSignatureVerifier | undefined, now: Date) {
  if (!agreement.document.includes('SignatureValue')) return { signed: false };
  if (!verifier)
    return { signed: true, verified: false, reason: 'this server has no trusted CA file (WSAG_CA_FILE) to check them' };
  try {
    const { provider, initiator } = verifier.verify(agreement.document, now);
    return {
      signed: true,
      verified: true,
      provider: provider.identity,
      ...(initiator ? { initiator: initiator.identity } : {}),
    };
  } catch (error) {
    return { signed: true, verified: false, reason: (error as Error).message };
  }
}
