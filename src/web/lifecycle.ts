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
  offerDocument,
  type OfferRequest,
  readOfferDocument,
  servedTemplate,
  servedTemplates,
  templateView,
} from './json-offers.js';
import { idempotentRoute, madeAlready, type Idempotency } from './idempotency.js';
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
  const template = (ref: string, unknown: (message: string) => Error) =>
    servedTemplate(options.templates, ref, options.now(), unknown);
  const view = (req: Request, agreement: Agreement) => agreementView(agreement, options.baseUrl(req));

  router.get(
    '/api/templates',
    answer('listing templates', (req) => {
      caller(req);
      return { templates: servedTemplates(options.templates, options.now()).map(templateView) };
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
  router.post(
    '/api/agreements',
    ...bodyWithin(options.maxBodyBytes),
    idempotentRoute(options.idempotency, caller, logger)('creating an agreement', 201, (req, who) => {
      const body = validBody<CreateAgreementBody>('createAgreement', jsonBody(req));
      const offer = readOfferDocument(offerDocument(body, (ref) => template(ref, (m) => new UnknownTemplate(m))));
      return {
        made: async (id) => {
          const agreement = id === undefined ? undefined : await madeAlready(options.agreements, id, who);
          return agreement && view(req, agreement);
        },
        make: async (agreementId) =>
          view(
            req,
            body.pending
              ? await options.factory.createPendingAgreement(offer, who, undefined, { agreementId })
              : await options.factory.createAgreement(offer, who, { agreementId }),
          ),
      };
    }),
  );
  router.post(
    '/api/agreements/:id/terminate',
    answer('terminating an agreement', async (req) =>
      view(req, await options.agreements.terminate(String(req.params.id), caller(req))),
    ),
  );
  return router;
}
