import express, { type Request, type Router } from 'express';
import type { Logger } from 'pino';
import type { Agreement } from '../domain/agreement.js';
import { UnknownResource, UnknownTemplate } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import type { AgreementFactory, AgreementService } from '../engine/agreements/index.js';
import type { TemplateLibrary } from '../xml/template-library.js';
import { bodyWithin, jsonAnswer, jsonBody } from './json-body.js';
import {
  agreementView,
  findTemplate,
  offerDocument,
  type OfferRequest,
  readOfferDocument,
  servedTemplates,
  templateView,
} from './json-offers.js';
import { idempotent, madeAlready, type Idempotency } from './idempotency.js';
import { validBody } from './openapi/validation.js';
import { sendProblem } from './problem.js';

export interface LifecycleOptions {
  factory: AgreementFactory;
  agreements: AgreementService;
  templates: TemplateLibrary;
  /** The largest body read (an offer document may be sent whole). */
  maxBodyBytes: number;
  baseUrl: (req: Request) => string;
  now: () => Date;
  /** Creates and accepts sent with an Idempotency-Key. */
  idempotency: Idempotency;
}

interface CreateAgreementBody extends OfferRequest {
  pending?: boolean;
}

/**
 * The agreement lifecycle over JSON, calling the use cases the SOAP ports call
 * (AgreementFactory, AgreementService): the templates with the Items a value sets, an
 * agreement made from a template and item values or from an offer document, and its
 * termination. Every agreement answered carries the links to read it again and to audit its
 * signed document.
 */
export function lifecycleRouter(options: LifecycleOptions, caller: (req: Request) => Caller, logger?: Logger): Router {
  const router = express.Router();
  const answer = jsonAnswer(logger);
  const once = idempotent(options.idempotency);
  const served = () => servedTemplates(options.templates, options.now());
  const template = (ref: string, unknown: (message: string) => Error) => findTemplate(served(), ref, unknown);
  const view = (req: Request, agreement: Agreement) => agreementView(agreement, options.baseUrl(req));

  router.get(
    '/api/templates',
    answer('listing templates', (req) => {
      caller(req);
      return { templates: served().map(templateView) };
    }),
  );
  router.get(
    '/api/templates/:id',
    answer('reading a template', (req) => {
      caller(req);
      return templateView(template(String(req.params.id), (m) => new UnknownResource(m)));
    }),
  );
  router.get('/api/templates/:id/document', (req, res) => {
    try {
      caller(req);
      res.type('application/xml').send(template(String(req.params.id), (m) => new UnknownResource(m)).xml);
    } catch (error) {
      sendProblem(res, error, 'reading a template document', logger);
    }
  });
  router.post('/api/agreements', ...bodyWithin(options.maxBodyBytes), async (req, res) => {
    try {
      const who = caller(req);
      const body = validBody<CreateAgreementBody>('createAgreement', jsonBody(req));
      const offer = readOfferDocument(offerDocument(body, (ref) => template(ref, (m) => new UnknownTemplate(m))));
      const create = (agreementId: string) =>
        body.pending
          ? options.factory.createPendingAgreement(offer, who, undefined, { agreementId })
          : options.factory.createAgreement(offer, who, { agreementId });
      await once(
        req,
        res,
        who,
        {
          made: async (id) => {
            const agreement = id === undefined ? undefined : await madeAlready(options.agreements, id, who);
            return agreement && view(req, agreement);
          },
          make: async (id) => view(req, await create(id)),
        },
        201,
      );
    } catch (error) {
      sendProblem(res, error, 'creating an agreement', logger);
    }
  });
  router.post(
    '/api/agreements/:id/terminate',
    answer('terminating an agreement', async (req) =>
      view(req, await options.agreements.terminate(String(req.params.id), caller(req))),
    ),
  );
  return router;
}
